-- a Flyway callback: runs after every migrate, which an install would not do
SELECT 1;
