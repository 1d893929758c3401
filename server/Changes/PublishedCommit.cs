using Jackdaw.Server.Databases;
using Jackdaw.Server.Documents;

namespace Jackdaw.Server.Changes;

/// <summary>
/// A durable commit as the feed hands it to its connections: one object shared by all of them,
/// which serializes each change's JSON at most once, for the first connection that sends it (a
/// benign race may serialize one twice; the result is the same). Matching and serializing happen on
/// the connections' senders, not on the publishing thread, so a commit of a million changes costs
/// the publisher one queue entry per connection.
/// </summary>
public sealed class PublishedCommit(DurableCommit commit, string databaseId)
{
    private byte[]?[]? _payloads;

    public IReadOnlyList<DocumentChange> Changes => commit.Changes;

    public long LastEtag => commit.LastEtag;

    /// <summary>The suffix of the database's change vectors.</summary>
    public string DatabaseId => databaseId;

    /// <summary>The <c>Value</c> JSON of change <paramref name="index"/>.</summary>
    public byte[] PayloadOf(int index)
    {
        var payloads = Volatile.Read(ref _payloads);
        if (payloads is null)
        {
            Interlocked.CompareExchange(ref _payloads, new byte[]?[commit.Changes.Count], null);
            payloads = _payloads!;
        }
        var payload = Volatile.Read(ref payloads[index]);
        if (payload is null)
        {
            payload = ChangesJson.DocumentChangeValue(commit.Changes[index], databaseId);
            Volatile.Write(ref payloads[index], payload);
        }
        return payload;
    }
}
