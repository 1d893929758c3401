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

    /// <summary>
    /// The document's JSON as the server sent it (a slice of the response, not a copy), kept from a
    /// load until <see cref="Snapshot"/> is taken; empty for an entity the session stored itself.
    /// </summary>
    public ReadOnlyMemory<byte> LoadedDocument { get; set; }

    /// <summary>
    /// Where the <c>"@metadata":{...}</c> property, with one adjoining comma, lies in
    /// <see cref="LoadedDocument"/>: what is left around it is the entity's stored JSON.
    /// Empty when it was not found in compact form, which turns the comparison with the loaded bytes off.
    /// </summary>
    public Range LoadedMetadataProperty { get; set; }

    /// <summary>The <c>@metadata</c> JSON as loaded (a slice of <see cref="LoadedDocument"/>); parsed only if the user asks for it or the document is saved.</summary>
    public ReadOnlyMemory<byte> LoadedMetadata { get; set; }

    public MetadataDictionary? Metadata { get; set; }

    /// <summary>
    /// The entity's JSON as loaded or last saved. Null for an entity never saved, and for a loaded
    /// one until a comparison needs it: it is then rebuilt from <see cref="LoadedDocument"/>.
    /// </summary>
    public byte[]? Snapshot { get; set; }

    public string? LastModified { get; set; }

    /// <summary>
    /// The document's attachments once this session's saves changed them (or GetNames read them);
    /// null until then: <c>@metadata.@attachments</c> as loaded says.
    /// </summary>
    public List<AttachmentName>? Attachments { get; set; }
}
