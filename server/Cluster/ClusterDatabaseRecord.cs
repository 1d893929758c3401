using System.Collections.Immutable;
using Jackdaw.Server.Indexing.Analysis;

namespace Jackdaw.Server.Cluster;

/// <summary>
/// A database as the cluster knows it: its name, the nodes that hold it (in the order clients
/// prefer them), its settings, its index definitions and analyzers. <see cref="TopologyEtag"/> is the log index of the last change of
/// its nodes: what <c>GET /topology</c> answers as <c>Etag</c>, so clients see when to refresh.
/// <see cref="Nodes"/> holds every node with a copy (replication sends to each); those among them
/// still catching up are <see cref="Promotables"/>, and clients are told only the <see cref="Members"/>.
/// </summary>
public sealed record ClusterDatabaseRecord(string Name, IReadOnlyList<string> Nodes, long TopologyEtag)
{
    public static ImmutableSortedDictionary<string, ClusterIndex> NoIndexes { get; } =
        ImmutableSortedDictionary.Create<string, ClusterIndex>(StringComparer.OrdinalIgnoreCase);

    public IReadOnlyDictionary<string, string> Settings { get; init; } = new Dictionary<string, string>();

    /// <summary>
    /// The log index of the command that created this record: a database deleted and created again
    /// under its name is another one, and a node that saw only the states before and after (it lagged,
    /// or installed a snapshot) deletes its old copy rather than keep its documents in the new one.
    /// 0 for records made before it was kept.
    /// </summary>
    public long CreatedIndex { get; init; }

    /// <summary>
    /// RavenDB's ConflictSolver JSON (<c>{"ResolveToLatest":false,...}</c>) that every node of the
    /// database applies; null: none set through the cluster (the latest write wins).
    /// </summary>
    public string? ConflictSolver { get; init; }

    /// <summary>
    /// The revisions configuration (RavenDB's <c>{"Default":{...},"Collections":{...}}</c>, as
    /// normalized by <c>RevisionsConfiguration</c>) every node of the database applies; null: none
    /// set through the cluster.
    /// </summary>
    public string? RevisionsConfiguration { get; init; }

    /// <summary>The conflict revisions configuration (one collection configuration's JSON) every node applies; null: none.</summary>
    public string? RevisionsConflictsConfiguration { get; init; }

    /// <summary>RavenDB's client configuration of the database (with the log index that set it); null: none.</summary>
    public ClusterClientConfiguration? ClientConfiguration { get; init; }

    /// <summary>The database's index definitions by name (ignoring case, as index names do); each node builds them.</summary>
    public ImmutableSortedDictionary<string, ClusterIndex> Indexes { get; init; } = NoIndexes;

    public static ImmutableSortedDictionary<string, AnalyzerDefinition> NoAnalyzers { get; } =
        ImmutableSortedDictionary.Create<string, AnalyzerDefinition>(StringComparer.OrdinalIgnoreCase);

    /// <summary>The database's analyzers by name (ignoring case); each node puts them in its copy before it builds the indexes.</summary>
    public ImmutableSortedDictionary<string, AnalyzerDefinition> Analyzers { get; init; } = NoAnalyzers;

    public static ImmutableSortedDictionary<long, ClusterBackupTask> NoBackups { get; } = ImmutableSortedDictionary<long, ClusterBackupTask>.Empty;

    /// <summary>The database's periodic backup tasks by id; each runs on its <c>ResponsibleNode</c> only.</summary>
    public ImmutableSortedDictionary<long, ClusterBackupTask> Backups { get; init; } = NoBackups;

    public static ImmutableSortedDictionary<string, string> NoPromotables { get; } =
        ImmutableSortedDictionary.Create<string, string>(StringComparer.Ordinal);

    /// <summary>
    /// RavenDB's promotables: nodes of <see cref="Nodes"/> added to a database that held data, each
    /// with its mentor (tag → the member whose feed it must have received), until the leader
    /// promotes them (<c>ClusterState.Promotables.cs</c>). They hold a copy and receive replication,
    /// but clients are not sent to them.
    /// </summary>
    public ImmutableSortedDictionary<string, string> Promotables { get; init; } = NoPromotables;

    /// <summary>
    /// RavenDB's rehabs: members the leader demoted after they did not answer for
    /// <c>ClusterNode.RehabAfter</c> (tag → mentor). They keep their copy and are promoted back, as
    /// promotables are, once they caught up with their mentor.
    /// </summary>
    public ImmutableSortedDictionary<string, string> Rehabs { get; init; } = NoPromotables;

    /// <summary>Whether <paramref name="tag"/> is a promotable or a rehab: a node with a copy that clients are not sent to.</summary>
    public bool IsCatchingUp(string tag) => Promotables.ContainsKey(tag) || Rehabs.ContainsKey(tag);

    /// <summary>The nodes clients may use (<c>GET /topology</c>): <see cref="Nodes"/> but the promotables and rehabs, in their order.</summary>
    public IReadOnlyList<string> Members => Promotables.IsEmpty && Rehabs.IsEmpty ? Nodes : [.. Nodes.Where(n => !IsCatchingUp(n))];
}
