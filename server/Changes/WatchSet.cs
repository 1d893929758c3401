using System.Collections.Immutable;
using Jackdaw.Server.Documents;

namespace Jackdaw.Server.Changes;

/// <summary>
/// What one connection watches: documents by id, id prefix or collection (or all of them), indexes
/// by name (or all), operations by id (or all), attachments of some documents (or of all). Immutable: a command builds a new set and swaps it in, so the publishing thread
/// matches changes against a consistent set without a lock. Ids, prefixes, collections and index
/// names compare ignoring case, as RavenDB's do.
/// </summary>
public sealed class WatchSet
{
    private static readonly StringComparer Names = StringComparer.OrdinalIgnoreCase;

    public static readonly WatchSet Empty = new(false, ImmutableHashSet.Create<string>(Names), [], ImmutableHashSet.Create<string>(Names), false, ImmutableHashSet.Create<string>(Names), false, [], false, ImmutableHashSet.Create<string>(Names));

    private WatchSet(bool allDocuments, ImmutableHashSet<string> documents, ImmutableArray<string> prefixes, ImmutableHashSet<string> collections, bool allIndexes, ImmutableHashSet<string> indexes, bool allOperations, ImmutableHashSet<long> operations, bool allAttachments, ImmutableHashSet<string> attachmentDocuments)
    {
        AllAttachments = allAttachments;
        AttachmentDocuments = attachmentDocuments;
        WatchesAttachments = allAttachments || !attachmentDocuments.IsEmpty;
        _watchesDocumentChanges = allDocuments || !documents.IsEmpty || !prefixes.IsEmpty || !collections.IsEmpty;
        AllDocuments = allDocuments;
        Documents = documents;
        Prefixes = prefixes;
        Collections = collections;
        AllIndexes = allIndexes;
        Indexes = indexes;
        AllOperations = allOperations;
        Operations = operations;
        WatchesDocuments = _watchesDocumentChanges || WatchesAttachments;
        WatchesIndexes = allIndexes || !indexes.IsEmpty;
        WatchesOperations = allOperations || !operations.IsEmpty;
    }

    public bool AllDocuments { get; }

    public ImmutableHashSet<string> Documents { get; }

    public ImmutableArray<string> Prefixes { get; }

    public ImmutableHashSet<string> Collections { get; }

    public bool AllIndexes { get; }

    public ImmutableHashSet<string> Indexes { get; }

    private readonly bool _watchesDocumentChanges;

    /// <summary>
    /// Whether any change of a commit can match, as a <c>DocumentChange</c> or an <c>AttachmentChange</c>
    /// (a cheap first test on the publishing thread).
    /// </summary>
    public bool WatchesDocuments { get; }

    public bool WatchesIndexes { get; }

    public bool AllOperations { get; }

    public ImmutableHashSet<long> Operations { get; }

    public bool WatchesOperations { get; }

    /// <summary>Whether every attachment change is watched.</summary>
    public bool AllAttachments { get; }

    /// <summary>The documents whose attachment changes are watched.</summary>
    public ImmutableHashSet<string> AttachmentDocuments { get; }

    public bool WatchesAttachments { get; }

    /// <summary>Whether <paramref name="change"/> is an attachment's change this set watches (sent as an <c>AttachmentChange</c>).</summary>
    public bool MatchesAttachment(in DocumentChange change) =>
        change.AttachmentName is not null && WatchesAttachments && (AllAttachments || AttachmentDocuments.Contains(change.Id));

    /// <summary>Whether <paramref name="change"/> is sent as a <c>DocumentChange</c>.</summary>
    public bool Matches(in DocumentChange change)
    {
        if (!_watchesDocumentChanges)
        {
            return false;
        }
        if (AllDocuments)
        {
            return true;
        }
        if (!Documents.IsEmpty && Documents.Contains(change.Id))
        {
            return true;
        }
        if (!Collections.IsEmpty && change.Collection is { } collection && Collections.Contains(collection))
        {
            return true;
        }
        foreach (var prefix in Prefixes)
        {
            if (change.Id.StartsWith(prefix, StringComparison.OrdinalIgnoreCase))
            {
                return true;
            }
        }
        return false;
    }

    /// <summary>The single entries watched: ids, prefixes, collections, indexes and operations.</summary>
    public int Count => Documents.Count + Prefixes.Length + Collections.Count + Indexes.Count + Operations.Count + AttachmentDocuments.Count;

    public bool MatchesIndex(string name) => AllIndexes || (!Indexes.IsEmpty && Indexes.Contains(name));

    public bool MatchesOperation(long id) => AllOperations || (!Operations.IsEmpty && Operations.Contains(id));

    public WatchSet WithAllDocuments(bool on) => new(on, Documents, Prefixes, Collections, AllIndexes, Indexes, AllOperations, Operations, AllAttachments, AttachmentDocuments);

    public WatchSet WithDocument(string id, bool on) => new(AllDocuments, on ? Documents.Add(id) : Documents.Remove(id), Prefixes, Collections, AllIndexes, Indexes, AllOperations, Operations, AllAttachments, AttachmentDocuments);

    public WatchSet WithPrefix(string prefix, bool on)
    {
        var without = Prefixes.RemoveAll(p => Names.Equals(p, prefix));
        return new(AllDocuments, Documents, on ? without.Add(prefix) : without, Collections, AllIndexes, Indexes, AllOperations, Operations, AllAttachments, AttachmentDocuments);
    }

    public WatchSet WithCollection(string collection, bool on) => new(AllDocuments, Documents, Prefixes, on ? Collections.Add(collection) : Collections.Remove(collection), AllIndexes, Indexes, AllOperations, Operations, AllAttachments, AttachmentDocuments);

    public WatchSet WithAllIndexes(bool on) => new(AllDocuments, Documents, Prefixes, Collections, on, Indexes, AllOperations, Operations, AllAttachments, AttachmentDocuments);

    public WatchSet WithIndex(string name, bool on) => new(AllDocuments, Documents, Prefixes, Collections, AllIndexes, on ? Indexes.Add(name) : Indexes.Remove(name), AllOperations, Operations, AllAttachments, AttachmentDocuments);

    public WatchSet WithAllOperations(bool on) => new(AllDocuments, Documents, Prefixes, Collections, AllIndexes, Indexes, on, Operations, AllAttachments, AttachmentDocuments);

    public WatchSet WithOperation(long id, bool on) => new(AllDocuments, Documents, Prefixes, Collections, AllIndexes, Indexes, AllOperations, on ? Operations.Add(id) : Operations.Remove(id), AllAttachments, AttachmentDocuments);

    public WatchSet WithAllAttachments(bool on) => new(AllDocuments, Documents, Prefixes, Collections, AllIndexes, Indexes, AllOperations, Operations, on, AttachmentDocuments);

    public WatchSet WithAttachmentsOf(string id, bool on) => new(AllDocuments, Documents, Prefixes, Collections, AllIndexes, Indexes, AllOperations, Operations, AllAttachments, on ? AttachmentDocuments.Add(id) : AttachmentDocuments.Remove(id));
}
