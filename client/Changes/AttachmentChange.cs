namespace Jackdaw.Client;

/// <summary>
/// An attachment was stored or deleted (durably) on the server. Its document was stored again in
/// the same transaction, so watchers of that document also get a <see cref="DocumentChange"/>.
/// </summary>
public sealed class AttachmentChange
{
    /// <summary><see cref="DocumentChangeTypes.Put"/> or <see cref="DocumentChangeTypes.Delete"/> (of the attachment).</summary>
    public DocumentChangeTypes Type { get; init; }

    public string DocumentId { get; init; } = "";

    public string Name { get; init; } = "";

    /// <summary>The document's collection; null when it has none.</summary>
    public string? CollectionName { get; init; }

    /// <summary>The document's change vector after the change (the attachment's own, as the server gives it).</summary>
    public string? ChangeVector { get; init; }

    public override string ToString() => $"{Type} of {Name} on {DocumentId}";
}
