package dev.ledger.console;

import com.github.mustachejava.DefaultMustacheFactory;
import com.github.mustachejava.Mustache;
import com.github.mustachejava.MustacheFactory;
import java.io.StringWriter;
import java.util.Map;

/**
 * The pages' templates ({@code dev/ledger/console/templates/*.mustache} on the class path),
 * compiled once and cached by mustache.java. Every {@code {{value}}} is HTML-escaped; the templates
 * use no triple mustaches. Thread-safe.
 */
final class Views {

  private final MustacheFactory factory =
      new DefaultMustacheFactory("dev/ledger/console/templates");

  String render(String template, Map<String, Object> model) {
    Mustache m = factory.compile(template + ".mustache");
    StringWriter out = new StringWriter();
    m.execute(out, model);
    return out.toString();
  }
}
