/**
 * The operator console: {@link dev.ledger.console.Console} (the core: a {@link
 * dev.ledger.console.Request} in, a {@link dev.ledger.console.Response} out) and {@link
 * dev.ledger.console.ConsoleServer} (the core served by the JDK's HTTP server). Everything else in
 * this package is package-private: the pages, the templates' models and the console's own reads.
 */
package dev.ledger.console;
