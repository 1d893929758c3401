using Jackdaw.Storage.Blittable;

namespace Jackdaw.Server.Documents.Commands;

/// <summary>
/// What a PATCH command of a batch runs: a script compiled above this layer (the patch engine
/// lives in <c>Patching/</c>, which uses the JavaScript sandbox of the indexes), handed to the
/// batch through this interface so that Documents depends on nothing above it.
/// </summary>
public interface IDocumentPatch
{
    /// <summary>
    /// Patches document <paramref name="id"/> as <paramref name="transaction"/> sees it, with every
    /// write of the script (the document, and its <c>put</c> and <c>del</c>) in that transaction.
    /// Called again with a fresh transaction when the merger retries, so it keeps nothing between calls.
    /// </summary>
    /// <param name="expectedChangeVector">The version the client expects (<c>If-Match</c>, a command's <c>ChangeVector</c>); null for any.</param>
    /// <param name="returnDocument">Whether the answer carries the patched document.</param>
    /// <exception cref="Errors.PatchScriptException">The script threw or ran past a limit.</exception>
    /// <exception cref="Errors.ConcurrencyException">The document is not at <paramref name="expectedChangeVector"/>.</exception>
    PatchOutcome Apply(DocumentsTransaction transaction, string id, string? expectedChangeVector, JsonOperationContext context, bool returnDocument);
}
