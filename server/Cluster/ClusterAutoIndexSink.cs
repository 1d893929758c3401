using Jackdaw.Server.Indexing;
using Jackdaw.Server.Indexing.Definitions;

namespace Jackdaw.Server.Cluster;

/// <summary>
/// Puts the auto-indexes a clustered database's queries create in its record, and takes out those
/// its housekeeping deletes, so that every node of the database has the same ones (RavenDB commits
/// an auto-index through the cluster too), and reports their use to the leader, which deletes those
/// idle on every node. Nothing for a database the cluster has no record of.
/// </summary>
public sealed class ClusterAutoIndexSink(ClusterNode node) : IAutoIndexSink
{
    public void Created(string database, IndexDefinition definition) => node.PublishAutoIndex(database, definition);

    public void Deleted(string database, string name) => node.RetractAutoIndex(database, name);

    public bool IsRecorded(string database, string name) => node.RecordOf(database) is { } record && record.Indexes.ContainsKey(name);

    public void Used(string database, IReadOnlyList<AutoIndexUsage> recorded) => node.ReportAutoIndexUsage(database, recorded);
}
