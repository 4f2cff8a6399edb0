-- holds the install open long enough for the test to cut its connection
SELECT pg_sleep(30);
