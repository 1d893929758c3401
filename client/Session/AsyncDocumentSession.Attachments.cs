using System.Text.Json;
using Jackdaw.Client.Json;

namespace Jackdaw.Client.Session;

/// <summary>
/// The session's side of attachments: the queue of attachment commands for the next save (with
/// RavenDB's checks against contradicting ones), and each tracked document's list of attachments,
/// kept up to date from the save's results (<see cref="IAttachmentsSessionOperations.GetNames"/>).
/// </summary>
internal sealed partial class AsyncDocumentSession
{
    private readonly List<DeferredCommand> _deferred = [];
    private readonly HashSet<(string Id, string Type, string Name)> _deferredKeys = new(DeferredKeyComparer.Instance);
    private readonly HashSet<Stream> _attachmentStreams = new(ReferenceEqualityComparer.Instance);
    private SessionAttachments? _attachments;

    public IAttachmentsSessionOperations Attachments => _attachments ??= new SessionAttachments(this);

    internal string DatabasePath => _databasePath;

    internal DocumentStore Store => _store;

    internal void IncrementRequests() => NumberOfRequests++;

    /// <summary>The id of a tracked entity, for an attachment command on it.</summary>
    internal string IdOfTracked(object entity, string what)
    {
        ArgumentNullException.ThrowIfNull(entity);
        if (!_byEntity.TryGetValue(entity, out var info))
        {
            throw new InvalidOperationException($"This {entity.GetType().Name} is not tracked by the session, so its attachments cannot be {what}; use the document's id instead, or load or store it first.");
        }
        return info.Id ?? throw new InvalidOperationException($"This {entity.GetType().Name} has no id yet (the server generates it at the save), so its attachments cannot be {what}; save it first or give it an id.");
    }

    internal void DeferStore(string id, string name, Stream stream, string? contentType)
    {
        if (_deletes.ContainsKey(id))
        {
            throw DeletedInSession("store", name, id, id);
        }
        ThrowIfDeferred(id, DeferredCommand.AttachmentPut, name, "store", "create");
        ThrowIfDeferred(id, DeferredCommand.AttachmentDelete, name, "store", "delete");
        ThrowIfDeferred(id, DeferredCommand.AttachmentMove, name, "store", "rename");
        if (!_attachmentStreams.Add(stream))
        {
            throw new InvalidOperationException($"This stream is already stored as an attachment by this session; attachment '{name}' of '{id}' needs a stream of its own.");
        }
        Defer(DeferredCommand.Put(id, name, stream, contentType));
    }

    internal void DeferDelete(string id, string name)
    {
        // Deleting the document deletes its attachments; deleting one twice is once.
        if (_deletes.ContainsKey(id) || _deferredKeys.Contains((id, DeferredCommand.AttachmentDelete, name)))
        {
            return;
        }
        ThrowIfDeferred(id, DeferredCommand.AttachmentPut, name, "delete", "create");
        ThrowIfDeferred(id, DeferredCommand.AttachmentMove, name, "delete", "rename");
        Defer(DeferredCommand.Delete(id, name));
    }

    /// <summary>An AttachmentMOVE or AttachmentCOPY; to itself it is nothing.</summary>
    internal void DeferMoveOrCopy(string type, string sourceId, string sourceName, string destinationId, string destinationName)
    {
        var operation = type == DeferredCommand.AttachmentMove ? "move" : "copy";
        if (string.Equals(sourceId, destinationId, StringComparison.OrdinalIgnoreCase) && sourceName == destinationName)
        {
            return;
        }
        if (_deletes.ContainsKey(sourceId))
        {
            throw DeletedInSession(operation, sourceName, sourceId, sourceId, destinationId);
        }
        if (_deletes.ContainsKey(destinationId))
        {
            throw DeletedInSession(operation, sourceName, sourceId, destinationId, destinationId);
        }
        ThrowIfDeferred(sourceId, DeferredCommand.AttachmentDelete, sourceName, operation, "delete");
        ThrowIfDeferred(sourceId, DeferredCommand.AttachmentMove, sourceName, operation, "rename");
        ThrowIfDeferred(destinationId, DeferredCommand.AttachmentDelete, destinationName, operation, "delete");
        ThrowIfDeferred(destinationId, DeferredCommand.AttachmentMove, destinationName, operation, "rename");
        Defer(DeferredCommand.MoveOrCopy(type, sourceId, sourceName, destinationId, destinationName));
    }

    /// <summary>The attachments of a tracked entity (or of a revision the session read).</summary>
    internal AttachmentName[] GetAttachmentNames(object entity)
    {
        ArgumentNullException.ThrowIfNull(entity);
        if (entity is string)
        {
            throw new ArgumentException("GetNames takes a tracked entity, not a document id: the names come from the metadata the session holds.", nameof(entity));
        }
        var info = _revisions.TryGetValue(entity, out var revision) ? revision
            : _byEntity.TryGetValue(entity, out var tracked) ? tracked
            : throw new InvalidOperationException($"This {entity.GetType().Name} is not tracked by the session; load it first.");
        return [.. AttachmentsOf(info)];
    }

    private void Defer(DeferredCommand command)
    {
        _deferred.Add(command);
        _deferredKeys.Add((command.Id, command.Type, command.Name));
    }

    private void ClearDeferred()
    {
        _deferred.Clear();
        _deferredKeys.Clear();
        _attachmentStreams.Clear();
    }

    private void ThrowIfDeferred(string id, string type, string name, string operation, string previous)
    {
        if (_deferredKeys.Contains((id, type, name)))
        {
            throw new InvalidOperationException($"Can't {operation} attachment '{name}' of document '{id}': this session already queued a command to {previous} an attachment of that name.");
        }
    }

    private static InvalidOperationException DeletedInSession(string operation, string name, string id, string deletedId, string? destinationId = null) =>
        new($"Can't {operation} attachment '{name}' of document '{id}'{(destinationId is null ? "" : $" to '{destinationId}'")}: document '{deletedId}' is deleted by this session.");

    /// <summary>Brings the tracked documents a saved attachment command changed up to date (their attachments and change vector).</summary>
    private void ApplyAttachmentResult(DeferredCommand command, JsonElement result)
    {
        var documentChangeVector = GetString(result, "DocumentChangeVector");
        switch (command.Type)
        {
            case DeferredCommand.AttachmentPut:
                AddAttachment(command.Id, command.Name, result, null, documentChangeVector);
                break;
            case DeferredCommand.AttachmentDelete:
                RemoveAttachment(command.Id, command.Name, documentChangeVector);
                break;
            case DeferredCommand.AttachmentCopy:
                AddAttachment(command.DestinationId!, command.DestinationName!, result, FindAttachment(command.Id, command.Name), documentChangeVector);
                break;
            case DeferredCommand.AttachmentMove:
                // Both documents change: the source's change vector is DocumentChangeVector, the destination's DestinationDocumentChangeVector.
                var moved = FindAttachment(command.Id, command.Name);
                RemoveAttachment(command.Id, command.Name, documentChangeVector);
                AddAttachment(command.DestinationId!, command.DestinationName!, result, moved, GetString(result, "DestinationDocumentChangeVector") ?? documentChangeVector);
                break;
        }
    }

    private AttachmentName? FindAttachment(string id, string name) =>
        _byId.TryGetValue(id, out var info) ? AttachmentsOf(info).Find(a => string.Equals(a.Name, name, StringComparison.OrdinalIgnoreCase)) : null;

    private void AddAttachment(string id, string name, JsonElement result, AttachmentName? source, string? documentChangeVector)
    {
        if (!_byId.TryGetValue(id, out var info))
        {
            return;
        }
        var list = AttachmentsOf(info);
        list.RemoveAll(a => string.Equals(a.Name, name, StringComparison.OrdinalIgnoreCase));
        list.Add(new AttachmentName
        {
            Name = name,
            Hash = GetString(result, "Hash") ?? source?.Hash ?? "",
            ContentType = GetString(result, "ContentType") ?? source?.ContentType ?? "",
            Size = result.TryGetProperty("Size", out var size) && size.TryGetInt64(out var n) ? n : source?.Size ?? 0,
        });
        list.Sort((a, b) => StringComparer.OrdinalIgnoreCase.Compare(a.Name, b.Name));
        AttachmentsChanged(info, documentChangeVector);
    }

    private void RemoveAttachment(string id, string name, string? documentChangeVector)
    {
        if (!_byId.TryGetValue(id, out var info))
        {
            return;
        }
        AttachmentsOf(info).RemoveAll(a => string.Equals(a.Name, name, StringComparison.OrdinalIgnoreCase));
        AttachmentsChanged(info, documentChangeVector);
    }

    private static void AttachmentsChanged(DocumentInfo info, string? documentChangeVector)
    {
        if (documentChangeVector is not null)
        {
            info.ChangeVector = documentChangeVector;
            info.Metadata?.SetServerValue(MetadataKeys.ChangeVector, documentChangeVector);
        }

        info.Metadata?.SetServerValue(MetadataKeys.Attachments, JsonSerializer.SerializeToElement(info.Attachments, WireJson.Options));
    }

    /// <summary>The document's attachments: as this session last knew them, else as its <c>@metadata.@attachments</c> lists them.</summary>
    private static List<AttachmentName> AttachmentsOf(DocumentInfo info)
    {
        if (info.Attachments is { } known)
        {
            return known;
        }
        var list = new List<AttachmentName>();
        if (info.Metadata is { } metadata)
        {
            if (metadata.TryGetValue(MetadataKeys.Attachments, out var value) && value is JsonElement element)
            {
                ReadAttachments(element, list);
            }
        }
        else if (!info.LoadedMetadata.IsEmpty)
        {
            using var loaded = JsonDocument.Parse(info.LoadedMetadata);
            if (loaded.RootElement.TryGetProperty(MetadataKeys.Attachments, out var element))
            {
                ReadAttachments(element, list);
            }
        }

        info.Attachments = list;
        return list;
    }

    private static void ReadAttachments(JsonElement array, List<AttachmentName> list)
    {
        if (array.ValueKind != JsonValueKind.Array)
        {
            return;
        }
        foreach (var item in array.EnumerateArray())
        {
            if (item.ValueKind != JsonValueKind.Object)
            {
                continue;
            }
            list.Add(new AttachmentName
            {
                Name = GetString(item, "Name") ?? "",
                Hash = GetString(item, "Hash") ?? "",
                ContentType = GetString(item, "ContentType") ?? "",
                Size = item.TryGetProperty("Size", out var size) && size.TryGetInt64(out var n) ? n : 0,
            });
        }
    }

    /// <summary>Ids ignore case, as the server's; so do attachment names.</summary>
    private sealed class DeferredKeyComparer : IEqualityComparer<(string Id, string Type, string Name)>
    {
        public static readonly DeferredKeyComparer Instance = new();

        public bool Equals((string Id, string Type, string Name) x, (string Id, string Type, string Name) y) =>
            string.Equals(x.Id, y.Id, StringComparison.OrdinalIgnoreCase) && x.Type == y.Type && string.Equals(x.Name, y.Name, StringComparison.OrdinalIgnoreCase);

        public int GetHashCode((string Id, string Type, string Name) key) =>
            HashCode.Combine(StringComparer.OrdinalIgnoreCase.GetHashCode(key.Id), key.Type, StringComparer.OrdinalIgnoreCase.GetHashCode(key.Name));
    }
}
