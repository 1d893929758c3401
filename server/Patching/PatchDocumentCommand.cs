using Jackdaw.Server.Documents;
using Jackdaw.Server.Documents.Commands;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Server.Patching;

/// <summary>
/// <c>PATCH /databases/*/docs?id=</c>: one document's patch, in a merged transaction. With
/// <see cref="Test"/> (RavenDB's <c>test=true</c>) the patch runs in the transaction as usual and
/// then throws <see cref="TestRunRollback"/>, which rolls the transaction back: the answer tells
/// what the patch would do, with the script's loads seeing its own puts, and nothing is stored.
/// </summary>
public sealed class PatchDocumentCommand(DocumentPatch patch, string id, string? expectedChangeVector, JsonOperationContext context) : IMergedCommand<DocumentsTransaction>
{
    /// <summary>Run, answer, and store nothing.</summary>
    public bool Test { get; init; }

    public PatchOutcome Result { get; private set; }

    public void Execute(DocumentsTransaction transaction)
    {
        Result = patch.Apply(transaction, id, expectedChangeVector, context, returnDocument: true);
        if (Test)
        {
            throw new TestRunRollback();
        }
    }

    /// <summary>Thrown by a test run once it has its answer, so that the merger rolls its writes back.</summary>
    public sealed class TestRunRollback() : Exception("A test patch stores nothing: its transaction is rolled back.");
}
