/**
 * Private API. No compatibility guarantees provided.
 *
 * <p>The ledger's kernel, which every operation package ({@code append}, {@code claim}, {@code
 * replay}, {@code scrub}, {@code read}) runs on: the transaction engine ({@link
 * dev.ledger.kernel.Engine} runs an operation in the ledger's own transaction, a caller's, or on
 * one connection; {@link dev.ledger.kernel.Tx} is that transaction's context), routing ({@link
 * dev.ledger.kernel.Directory}: which schema a domain's rows live in, with provisioning, schema
 * version checks and the domain lock beside it) and rendering ({@link
 * dev.ledger.kernel.RenderedStatement}: hot statements rendered once per schema; {@link
 * dev.ledger.kernel.Rows}: rows to the API's records). Users call {@code dev.ledger.Ledger};
 * nothing here is part of the published Javadoc.
 */
package dev.ledger.kernel;
