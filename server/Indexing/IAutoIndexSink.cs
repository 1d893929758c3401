using Jackdaw.Server.Indexing.Definitions;

namespace Jackdaw.Server.Indexing;

/// <summary>
/// Told of the auto-indexes a database's queries create and its housekeeping deletes (idle too
/// long, or covered by a wider one), so that a cluster can record them and every node of the
/// database have them. Called after the change, on the thread that made it: it must not block
/// (queue the work). Set by the server (<see cref="IndexStore.Component"/>); indexing knows nothing
/// of clusters.
/// </summary>
public interface IAutoIndexSink
{
    void Created(string database, IndexDefinition definition);

    void Deleted(string database, string name);
}
