using System.Text.Json;
using Jackdaw.Client.Session;
using Jackdaw.Client.Subscriptions;

namespace Jackdaw.Client;

/// <summary>
/// One batch a worker received: its documents (<see cref="Items"/>), and sessions that already hold
/// them and the documents the subscription's query includes (<see cref="OpenAsyncSession"/>).
/// </summary>
public sealed class SubscriptionBatch<T>
    where T : class
{
    private readonly DocumentStore _store;
    private readonly string _database;
    private readonly BatchMessage _message;

    internal SubscriptionBatch(DocumentStore store, string database, BatchMessage message)
    {
        _store = store;
        _database = database;
        _message = message;
        var items = new Item[message.Items.Count];
        for (var i = 0; i < items.Length; i++)
        {
            var (id, etag, changeVector, data) = message.Items[i];
            items[i] = new Item(store.Conventions, id, etag, changeVector, message.Body.AsMemory(data));
        }

        Items = items;
    }

    public IReadOnlyList<Item> Items { get; }

    public int NumberOfItemsInBatch => Items.Count;

    public int NumberOfIncludes => _message.Includes.Count;

    /// <summary>The etag this batch's acknowledgement moves the subscription to.</summary>
    public long LastEtag => _message.LastEtag;

    /// <summary>
    /// A session on the subscription's database whose identity map already holds the batch's
    /// documents and includes: loading one makes no request, and a change to it is stored by
    /// <c>SaveChangesAsync</c> like any loaded document's. Projected items (a query with <c>select</c>) are not documents and are not added.
    /// </summary>
    public IAsyncDocumentSession OpenAsyncSession()
    {
        var session = (AsyncDocumentSession)_store.OpenAsyncSession(_database);
        foreach (var (id, document) in _message.Includes)
        {
            session.RegisterReceivedDocument(id, _message.Body.AsMemory(document));
        }

        // Items last: an item that is also included is the newer (or the same) version.
        foreach (var item in Items)
        {
            if (!item.IsProjection)
            {
                session.RegisterReceivedDocument(item.Id, item.RawResult);
            }
        }

        return session;
    }

    /// <summary>One document of a batch.</summary>
    public sealed class Item
    {
        private readonly DocumentConventions _conventions;
        private T? _result;
        private JsonElement? _metadata;

        internal Item(DocumentConventions conventions, string id, long etag, string? changeVector, ReadOnlyMemory<byte> rawResult)
        {
            _conventions = conventions;
            Id = id;
            Etag = etag;
            ChangeVector = changeVector;
            RawResult = rawResult;
        }

        public string Id { get; }

        public long Etag { get; }

        public string? ChangeVector { get; }

        /// <summary>The document (or projection) as received, with its <c>@metadata</c>.</summary>
        public ReadOnlyMemory<byte> RawResult { get; }

        /// <summary>The <c>@metadata</c> object as received (an empty object when there is none).</summary>
        public JsonElement RawMetadata => _metadata ??= ReadMetadata();

        /// <summary>Whether the server sent a projection (the query selects) instead of the document.</summary>
        public bool IsProjection =>
            RawMetadata.TryGetProperty("@projection", out var projection) && projection.ValueKind == JsonValueKind.True;

        /// <summary>
        /// The document read as <typeparamref name="T"/> through the conventions' serializer, with its
        /// id property set. Read on first use; a document that is not a <typeparamref name="T"/> throws
        /// <see cref="JackdawException"/> there, inside the batch function.
        /// </summary>
        public T Result => _result ??= Deserialize();

        private T Deserialize()
        {
            var options = _conventions.SerializerOptions;
            try
            {
                if (options.GetTypeInfo(typeof(T)).Kind != System.Text.Json.Serialization.Metadata.JsonTypeInfoKind.Object)
                {
                    return JsonSerializer.Deserialize<T>(RawResult.Span, options) ?? throw new JackdawException($"Subscription item '{Id}' is null.");
                }

                var type = _conventions.GetEntityTypeInfo(typeof(T));
                var entity = (T?)JsonSerializer.Deserialize(RawResult.Span, type.JsonTypeInfo) ?? throw new JackdawException($"Subscription item '{Id}' deserialized to null.");
                type.SetId?.Invoke(entity, Id);
                return entity;
            }
            catch (JsonException e)
            {
                throw new JackdawException($"Subscription item '{Id}' cannot be read as a {typeof(T).FullName}: {e.Message}", e);
            }
        }

        private JsonElement ReadMetadata()
        {
            using var document = JsonDocument.Parse(RawResult);
            return document.RootElement.TryGetProperty(MetadataKeys.Metadata, out var metadata) && metadata.ValueKind == JsonValueKind.Object
                ? metadata.Clone()
                : JsonDocument.Parse("{}").RootElement.Clone();
        }
    }
}
