using Jackdaw.Client.Conventions;

namespace Jackdaw.Client.Session;

/// <summary>What a session knows about one tracked entity.</summary>
internal sealed class DocumentInfo(object entity, EntityTypeInfo type)
{
    public object Entity { get; } = entity;

    public EntityTypeInfo Type { get; } = type;

    /// <summary>The document id; null until the server generated it.</summary>
    public string? Id { get; set; }

    /// <summary>For a generated id, what to send instead (<c>users/</c> or <c>users|</c>).</summary>
    public string? IdPrefix { get; set; }

    /// <summary>Change vector of the stored version this session last saw; null when new.</summary>
    public string? ChangeVector { get; set; }

    /// <summary>A change vector given to StoreAsync, checked at the next save.</summary>
    public string? ExpectedChangeVector { get; set; }

    /// <summary>The <c>@metadata</c> JSON as loaded; parsed only if the user asks for it or the document is saved.</summary>
    public byte[]? LoadedMetadata { get; set; }

    public MetadataDictionary? Metadata { get; set; }

    /// <summary>The entity's JSON as loaded or last saved; null for an entity never saved.</summary>
    public byte[]? Snapshot { get; set; }

    public string? LastModified { get; set; }
}
