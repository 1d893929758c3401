using Jackdaw.Server.Indexing.Definitions;

namespace Jackdaw.Server.Indexing;

/// <summary>The sink of a server without a cluster (and of tests of indexing alone): auto-indexes stay local.</summary>
public sealed class NoAutoIndexSink : IAutoIndexSink
{
    public static NoAutoIndexSink Instance { get; } = new();

    private NoAutoIndexSink()
    {
    }

    public void Created(string database, IndexDefinition definition)
    {
    }

    public void Deleted(string database, string name)
    {
    }

    public bool IsRecorded(string database, string name) => false;

    public void Used(string database, IReadOnlyList<AutoIndexUsage> recorded)
    {
    }
}
