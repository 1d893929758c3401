namespace Jackdaw.Client;

/// <summary>A document was stored or deleted (durably) on the server.</summary>
public sealed class DocumentChange
{
    public DocumentChangeTypes Type { get; init; }

    public string Id { get; init; } = "";

    /// <summary>The document's collection; null when it has none.</summary>
    public string? CollectionName { get; init; }

    /// <summary>The change vector of this version (of the deletion, for a delete).</summary>
    public string? ChangeVector { get; init; }

    public override string ToString() => $"{Type} on {Id}";
}
