package dev.ledger.diff;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class MigrationErrorsTest {

  @Test
  void line_counts_from_the_first_token_not_from_leading_comments() {
    String statement =
        "-- note\n/* block\n comment */\nCREATE TABLE u (\n  a int,\n  b int nto null\n)";
    int position = statement.indexOf("nto") + 1;
    // Flyway reports line 10 for a statement whose first token (CREATE) is on line 10.
    assertThat(MigrationErrors.errorLine(10, statement, position)).isEqualTo(12);
  }

  @Test
  void without_a_position_the_statement_line_is_the_error_line() {
    assertThat(MigrationErrors.errorLine(4, "DO $$ BEGIN RAISE 'x'; END $$", 0)).isEqualTo(4);
    assertThat(MigrationErrors.errorLine(4, null, 12)).isEqualTo(4);
  }

  @Test
  void position_counts_characters_not_utf16_units() {
    String statement = "SELECT '\uD83D\uDE00',\n nope";
    int position = statement.codePointCount(0, statement.indexOf("nope")) + 1;
    assertThat(MigrationErrors.errorLine(1, statement, position)).isEqualTo(2);
  }

  @Test
  void first_token_skips_nested_block_comments_and_line_comments() {
    assertThat(MigrationErrors.firstToken("/* a /* b */ c */ -- d\n  SELECT 1")).isEqualTo(25);
    assertThat(MigrationErrors.firstToken("-- only a comment")).isEqualTo(17);
  }

  @Test
  void multi_line_messages_become_one_line() {
    assertThat(MigrationErrors.oneLine("Found more\n------\nOffenders:\n-> a\n-> b\n"))
        .isEqualTo("Found more Offenders: -> a -> b");
  }
}
