package dev.ledger.diff;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class TypeChangeTest {

  @ParameterizedTest(name = "{0} -> {1}: {2}")
  @CsvSource(
      delimiter = '|',
      value = {
        "character varying(20)        | character varying(40)        | SAFE",
        "character varying(20)        | character varying            | SAFE",
        "character varying(20)        | text                         | SAFE",
        "text                         | character varying            | SAFE",
        "numeric(10,2)                | numeric(12,2)                | SAFE",
        "numeric(10,2)                | numeric                      | SAFE",
        "timestamp(3) with time zone  | timestamp with time zone     | SAFE",
        "timestamp(3) with time zone  | timestamp(6) with time zone  | SAFE",
        "smallint                     | integer                      | LOCKING",
        "integer                      | bigint                       | LOCKING",
        "integer                      | numeric                      | LOCKING",
        "integer                      | numeric(12,0)                | LOCKING",
        "numeric(10,2)                | numeric(12,4)                | LOCKING",
        "real                         | double precision             | LOCKING",
        "character(4)                 | character(8)                 | LOCKING",
        "integer                      | text                         | LOCKING",
        "timestamp without time zone  | timestamp with time zone     | LOCKING",
        "character varying(20)[]      | character varying(40)[]      | LOCKING",
        "character varying(40)        | character varying(20)        | DESTRUCTIVE",
        "text                         | character varying(20)        | DESTRUCTIVE",
        "bigint                       | integer                      | DESTRUCTIVE",
        "integer                      | smallint                     | DESTRUCTIVE",
        "integer                      | numeric(5,0)                 | DESTRUCTIVE",
        "numeric(12,2)                | numeric(10,2)                | DESTRUCTIVE",
        "numeric(10,4)                | numeric(10,2)                | DESTRUCTIVE",
        "numeric                      | numeric(10,2)                | DESTRUCTIVE",
        "double precision             | real                         | DESTRUCTIVE",
        "timestamp(6) with time zone  | timestamp(3) with time zone  | DESTRUCTIVE",
        "text                         | integer                      | DESTRUCTIVE",
        "integer[]                    | integer                      | DESTRUCTIVE",
        "character varying(40)[]      | character varying(20)[]      | DESTRUCTIVE",
        "jsonb                        | json                         | DESTRUCTIVE",
      })
  void classifies_by_what_the_rows_go_through(String from, String to, Risk risk) {
    assertThat(TypeChange.classify(from, to).risk()).isEqualTo(risk);
  }

  @ParameterizedTest(name = "{0} -> {1}")
  @CsvSource(
      delimiter = '|',
      value = {
        "character varying(40) | character varying(20) | type narrowed from character varying(40)"
            + " to character varying(20): longer values fail the change",
        "integer | bigint | type widened from integer to bigint: rewrites the table under an"
            + " ACCESS EXCLUSIVE lock",
        "character varying(20) | text | type widened from character varying(20) to text: no"
            + " rewrite, catalog only",
        "text | integer | type changed from text to integer: values that do not convert fail the"
            + " change, and the table is rewritten",
      })
  void reason_names_both_types(String from, String to, String reason) {
    assertThat(TypeChange.classify(from, to).reason()).isEqualTo(reason);
  }
}
