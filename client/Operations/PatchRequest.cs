namespace Jackdaw.Client;

/// <summary>A JavaScript patch (RavenDB's <c>PatchRequest</c>): <see cref="Script"/> runs with <c>this</c> the document and <c>args</c> the <see cref="Values"/>.</summary>
public sealed class PatchRequest
{
    public required string Script { get; init; }

    /// <summary>The script's <c>args</c>, serialized with the store's conventions.</summary>
    public IDictionary<string, object?> Values { get; init; } = new Dictionary<string, object?>();
}
