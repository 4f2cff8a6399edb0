package dev.ledger.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.opentest4j.AssertionFailedError;
import org.opentest4j.TestAbortedException;

/** {@link Tools}: a missing program skips a test with the install line, or fails it if required. */
class ToolsTest {

  private static final Tools.Tool ABSENT =
      new Tools.Tool("ledger-no-such-tool-4e1f", "sudo apt-get install ledger-no-such-tool");

  @Test
  void a_missing_tool_not_required_skips_the_test_with_one_line_saying_what_to_install() {
    for (String required : new String[] {null, "", "pgbouncer,jq"}) {
      assertThatThrownBy(() -> Tools.require(ABSENT, "/nonexistent", required))
          .isExactlyInstanceOf(TestAbortedException.class)
          .hasMessage(
              "skipped: ledger-no-such-tool-4e1f is not installed"
                  + " (sudo apt-get install ledger-no-such-tool)");
    }
  }

  @Test
  void a_missing_tool_that_is_required_fails_the_test() {
    for (String required :
        new String[] {"ledger-no-such-tool-4e1f", "jq, LEDGER-NO-SUCH-TOOL-4E1F", "all"}) {
      assertThatThrownBy(() -> Tools.require(ABSENT, "/nonexistent", required))
          .isExactlyInstanceOf(AssertionFailedError.class)
          .hasMessage(
              "ledger-no-such-tool-4e1f is not installed (sudo apt-get install"
                  + " ledger-no-such-tool), and -Dledger.test.require requires it");
    }
  }

  @Test
  void a_tool_on_the_path_is_found_whether_required_or_not(@TempDir Path dir) throws Exception {
    Path tool = dir.resolve("ledger-no-such-tool-4e1f");
    Files.writeString(tool, "#!/bin/sh\n");
    Files.setPosixFilePermissions(tool, PosixFilePermissions.fromString("rwxr-xr-x"));
    assertThat(Tools.require(ABSENT, "/nonexistent:" + dir, "all")).isEqualTo(tool);
    assertThat(Tools.require(ABSENT, dir.toString(), null)).isEqualTo(tool);
    // a file that is not executable is not the program
    Files.setPosixFilePermissions(tool, PosixFilePermissions.fromString("rw-r--r--"));
    assertThatThrownBy(() -> Tools.require(ABSENT, dir.toString(), null))
        .isInstanceOf(TestAbortedException.class);
  }

  @Test
  void an_extension_is_found_by_its_library_and_skips_or_fails_without_it(@TempDir Path dir)
      throws Exception {
    Path library = dir.resolve("citus.so");
    assertThatThrownBy(() -> Tools.requireFile(Tools.CITUS, library, "pgbouncer"))
        .isExactlyInstanceOf(TestAbortedException.class)
        .hasMessage(
            "skipped: citus is not installed (run ../shared/tools/citus/install.sh as root; it"
                + " installs Citus 13.2.2 into /usr/lib/postgresql/15)");
    assertThatThrownBy(() -> Tools.requireFile(Tools.CITUS, library, "pgbouncer,citus"))
        .isExactlyInstanceOf(AssertionFailedError.class)
        .hasMessageEndingWith("and -Dledger.test.require requires it");
    Files.writeString(library, "");
    assertThat(Tools.requireFile(Tools.CITUS, library, "citus")).isEqualTo(library);
  }
}
