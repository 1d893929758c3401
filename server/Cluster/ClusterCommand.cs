using Jackdaw.Server.Indexing.Analysis;
namespace Jackdaw.Server.Cluster;

/// <summary>
/// One entry of the cluster's Raft log, as JSON. <see cref="Id"/> is unique per request (RavenDB's
/// <c>raft-request-id</c> when the client sent one): the state machine applies an id once, so a
/// command retried after a lost answer or a change of leader changes nothing the second time.
/// </summary>
public sealed record ClusterCommand(string Id, ClusterCommandKind Kind)
{
    public string? Tag { get; init; }

    public string? Url { get; init; }

    public string? Database { get; init; }

    public IReadOnlyList<string>? Nodes { get; init; }

    public IReadOnlyDictionary<string, string>? Settings { get; init; }

    /// <summary>The indexes an index command changes (<see cref="ClusterCommandKind.PutIndexes"/> and the like).</summary>
    public IReadOnlyList<ClusterIndexChange>? Indexes { get; init; }

    /// <summary>The subscription a subscription command (<c>*Subscription*</c> kinds) is about, with <c>Database</c>.</summary>
    public ClusterSubscriptionChange? Subscription { get; init; }

    /// <summary>The registered certificates a <see cref="ClusterCommandKind.PutCertificates"/> puts.</summary>
    public IReadOnlyList<ClusterCertificate>? Certificates { get; init; }

    /// <summary>The certificate a <see cref="ClusterCommandKind.DeleteCertificate"/> removes.</summary>
    public string? Thumbprint { get; init; }

    /// <summary>The periodic backup task a backup command (<c>*Backup*</c> kinds) is about, with <c>Database</c>.</summary>
    public ClusterBackupChange? Backup { get; init; }

    /// <summary>RavenDB's ConflictSolver JSON a <see cref="ClusterCommandKind.SetConflictSolver"/> puts in the record of <c>Database</c>.</summary>
    public string? ConflictSolver { get; init; }

    /// <summary>RavenDB's ClientConfiguration JSON a <see cref="ClusterCommandKind.PutClientConfiguration"/> puts (server-wide, or for <c>Database</c>).</summary>
    public string? ClientConfiguration { get; init; }

    /// <summary>The mentor of a promotable: chosen by the leader (<see cref="ClusterCommandKind.AddDatabaseNode"/>), or the node that vouches for it (<see cref="ClusterCommandKind.PromoteDatabaseNode"/>).</summary>
    public string? Mentor { get; init; }

    /// <summary>What the mentor saw of the promotable's replication when it asked for a <see cref="ClusterCommandKind.PromoteDatabaseNode"/>.</summary>
    public PromotableProgress? Progress { get; init; }

    /// <summary>The analyzers a <see cref="ClusterCommandKind.PutAnalyzers"/> puts in the record of <c>Database</c>.</summary>
    public IReadOnlyList<AnalyzerDefinition>? Analyzers { get; init; }

    /// <summary>The name of the analyzer a <see cref="ClusterCommandKind.DeleteAnalyzer"/> deletes.</summary>
    public string? Analyzer { get; init; }

    /// <summary>The JSON a <see cref="ClusterCommandKind.SetRevisionsConfiguration"/> or <see cref="ClusterCommandKind.SetRevisionsConflictsConfiguration"/> puts in the record of <c>Database</c>.</summary>
    public string? Revisions { get; init; }

    public static string NewId() => Guid.NewGuid().ToString("N");
}
