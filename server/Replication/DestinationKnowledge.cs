using System.Globalization;
using Jackdaw.Server.Documents;

namespace Jackdaw.Server.Replication;

/// <summary>
/// What a destination holds for certain, as the sender keeps it, so that an item whose change
/// vector it <see cref="Covers"/> need not travel: the sender leaves it out of the batch and moves
/// the destination's position past it all the same. Two sources:
/// <list type="bullet">
/// <item>the destination copy's own entries, at any etag: a version whose every entry is the
/// destination's database id was made there, left it only once durable, and the destination
/// holds its id at that version or a newer one (an id's versions only grow; a restored or
/// recreated copy has a new database id). This is what stops a node's writes echoing back to it,
/// however stale the last Ack;</item>
/// <item>the change vector of its last <c>Hello</c> or <c>Ack</c> (<c>"ChangeVector"</c>), each
/// database id at an etag it vouches for (<see cref="DatabaseReplication.KnownChangeVector"/>).</item>
/// </list>
/// </summary>
public sealed class DestinationKnowledge
{
    /// <summary>A destination that vouches for nothing (an older node, or none heard yet): every item is sent.</summary>
    public static readonly DestinationKnowledge Nothing = new([]);

    /// <summary>The etag given to the destination's own database id: every one of its versions.</summary>
    private const long Everything = long.MaxValue;

    private readonly Dictionary<string, long> _etags;
    private readonly Dictionary<string, long>.AlternateLookup<ReadOnlySpan<char>> _lookup;

    private DestinationKnowledge(Dictionary<string, long> etags)
    {
        _etags = etags;
        _lookup = etags.GetAlternateLookup<ReadOnlySpan<char>>();
    }

    /// <summary>Whether nothing is vouched for.</summary>
    public bool IsEmpty => _etags.Count == 0;

    /// <summary>
    /// The destination copy <paramref name="destinationDatabaseId"/> (null: unknown) and the vector
    /// it vouched for (null or empty: none).
    /// </summary>
    /// <exception cref="FormatException">An entry is not <c>{tag}:{etag}-{database id}</c>.</exception>
    public static DestinationKnowledge Of(string? destinationDatabaseId, string? changeVector)
    {
        var etags = new Dictionary<string, long>(StringComparer.Ordinal);
        if (!string.IsNullOrEmpty(changeVector))
        {
            foreach (var entry in ChangeVectors.Parse(changeVector))
            {
                etags[entry.DatabaseId] = Math.Max(entry.Etag, etags.GetValueOrDefault(entry.DatabaseId));
            }
        }
        if (!string.IsNullOrEmpty(destinationDatabaseId))
        {
            etags[destinationDatabaseId] = Everything;
        }
        return etags.Count == 0 ? Nothing : new DestinationKnowledge(etags);
    }

    /// <summary>
    /// Whether every entry of <paramref name="changeVector"/> is at or below the destination's
    /// entry for the same database id (RavenDB's "already merged"); an empty or unreadable vector
    /// is never covered. Allocates nothing.
    /// </summary>
    public bool Covers(ReadOnlySpan<char> changeVector)
    {
        if (_etags.Count == 0 || changeVector.IsEmpty)
        {
            return false;
        }
        var any = false;
        foreach (var range in changeVector.Split(','))
        {
            var part = changeVector[range].Trim();
            if (part.IsEmpty)
            {
                continue;
            }
            var colon = part.IndexOf(':');
            if (colon <= 0)
            {
                return false;
            }
            var rest = part[(colon + 1)..];
            var dash = rest.IndexOf('-');
            if (dash <= 0 || !long.TryParse(rest[..dash], NumberStyles.None, CultureInfo.InvariantCulture, out var etag))
            {
                return false;
            }
            if (!_lookup.TryGetValue(rest[(dash + 1)..], out var known) || known < etag)
            {
                return false;
            }
            any = true;
        }
        return any;
    }

    public override string ToString() => string.Join(", ", _etags.Select(e => $"{e.Key}@{e.Value}"));
}
