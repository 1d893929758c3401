using Jackdaw.Server.Indexing.Definitions;

namespace Jackdaw.Server.Indexing;

/// <summary>
/// Told of the auto-indexes a database's queries create and its housekeeping retires (idle too
/// long, or covered by a wider one), so that a cluster can record them and every node of the
/// database have them. Called after the change, on the thread that made it: it must not block
/// (queue the work). Set by the server (<see cref="IndexStore.Component"/>); indexing knows nothing
/// of clusters.
/// </summary>
public interface IAutoIndexSink
{
    void Created(string database, IndexDefinition definition);

    void Deleted(string database, string name);

    /// <summary>
    /// True when a cluster's record of <paramref name="database"/> has auto-index <paramref name="name"/>:
    /// only the record deletes it then, on every node at once. Housekeeping neither deletes it for
    /// idleness (its idleness is this node's own: another node's queries may use it) nor deletes a
    /// covered one here before the record does (<see cref="Deleted"/> asks for that).
    /// </summary>
    bool IsRecorded(string database, string name);

    /// <summary>
    /// The use of <paramref name="database"/>'s recorded auto-indexes on this node (those
    /// <see cref="IsRecorded"/> says yes to), at each housekeeping pass: a cluster deletes one from
    /// the record once every node of the database reports it expired.
    /// </summary>
    void Used(string database, IReadOnlyList<AutoIndexUsage> recorded);
}
