using Jackdaw.Server.Indexing.Lucene;
using LuceneDirectory = Lucene.Net.Store.Directory;

namespace Jackdaw.Server.Indexing;

/// <summary>Settings of the indexes of every database.</summary>
public sealed class IndexingOptions
{
    /// <summary>An auto-index not queried for this long becomes idle (stops indexing until a query needs it).</summary>
    public TimeSpan AutoIndexIdleAfter { get; init; } = TimeSpan.FromMinutes(30);

    /// <summary>An auto-index idle this long is deleted (logged, and shown in stats beforehand).</summary>
    public TimeSpan AutoIndexDeleteAfter { get; init; } = TimeSpan.FromDays(7);

    /// <summary>How often idleness is checked.</summary>
    public TimeSpan IdleCheckInterval { get; init; } = TimeSpan.FromMinutes(1);

    /// <summary>Opens an index's folder as a Lucene directory (a <see cref="PreadDirectory"/> unless set: tests wrap it to inject disk failures).</summary>
    public Func<string, LuceneDirectory>? OpenDirectory { get; init; }
}
