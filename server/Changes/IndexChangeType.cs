namespace Jackdaw.Server.Changes;

/// <summary>The <c>Type</c> of an <c>IndexChange</c>, named as RavenDB's clients name them.</summary>
public enum IndexChangeType
{
    /// <summary>An indexing batch finished (the index moved on).</summary>
    BatchCompleted,

    IndexAdded,

    IndexRemoved,

    /// <summary>A changed definition built side by side replaced the index (our "replacement swapped").</summary>
    SideBySideReplace,
}
