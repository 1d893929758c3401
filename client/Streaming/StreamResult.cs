using System.Text.Json;
using Jackdaw.Client.Session;

namespace Jackdaw.Client;

/// <summary>
/// One result of a stream (<see cref="IAdvancedSessionOperations.StreamAsync{T}(string?, string?, int, int, string?, string?, CancellationToken)"/>):
/// the document read as <typeparamref name="T"/>, its id, change vector and metadata. Streamed
/// documents are not tracked by the session: storing a change to one needs a load (or
/// <c>StoreAsync</c> with its id and change vector).
/// </summary>
public sealed class StreamResult<T>
{
    private readonly byte[]? _metadataJson;
    private MetadataDictionary? _metadata;

    internal StreamResult(string? id, string? changeVector, byte[]? metadataJson, T document)
    {
        Id = id;
        ChangeVector = changeVector;
        _metadataJson = metadataJson;
        Document = document;
    }

    /// <summary>The document's id; null for a projection that has none.</summary>
    public string? Id { get; }

    public string? ChangeVector { get; }

    /// <summary>The result's <c>@metadata</c> (read when first asked for); empty when it had none.</summary>
    public MetadataDictionary Metadata => _metadata ??= Read(_metadataJson);

    public T Document { get; }

    private static MetadataDictionary Read(byte[]? json)
    {
        if (json is null)
        {
            return new MetadataDictionary(null);
        }
        using var document = JsonDocument.Parse(json);
        return new MetadataDictionary(document.RootElement);
    }
}
