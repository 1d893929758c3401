namespace Jackdaw.Client;

/// <summary>What happened to an index (RavenDB's names and values; the ones Jackdaw sends).</summary>
[Flags]
public enum IndexChangeTypes
{
    None = 0,

    /// <summary>An indexing batch finished.</summary>
    BatchCompleted = 1,

    IndexAdded = 8,

    IndexRemoved = 16,

    /// <summary>A changed definition built side by side replaced the index.</summary>
    SideBySideReplace = 1024,
}
