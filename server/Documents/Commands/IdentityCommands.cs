namespace Jackdaw.Server.Documents.Commands;

/// <summary><c>POST /databases/*/identity/next?name=</c>: takes the identity's next value, as a put of <c>name|</c> would.</summary>
public sealed class NextIdentityCommand(string prefix) : IMergedCommand<DocumentsTransaction>
{
    public long Value { get; private set; }

    public void Execute(DocumentsTransaction transaction) => Value = transaction.NextIdentity(prefix);
}

/// <summary><c>POST /databases/*/identity/seed?name=&amp;value=&amp;force=</c>: raises the identity to a value (or sets it, forced).</summary>
public sealed class SeedIdentityCommand(string prefix, long value, bool force) : IMergedCommand<DocumentsTransaction>
{
    public long Value { get; private set; }

    public void Execute(DocumentsTransaction transaction) => Value = transaction.SeedIdentity(prefix, value, force);
}
