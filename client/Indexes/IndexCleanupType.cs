namespace Jackdaw.Client;

/// <summary>Why the cleanup advisor names indexes (<see cref="IndexCleanupAdvice.Type"/>).</summary>
public enum IndexCleanupType
{
    /// <summary>Not queried for a while (the server's threshold, 7 days by default).</summary>
    Unused,

    /// <summary>An auto-index whose fields another index covers.</summary>
    Covered,

    /// <summary>Static indexes over the same collection that could be one (see <see cref="IndexCleanupAdvice.MergedDefinition"/>).</summary>
    Mergeable,

    /// <summary>In the <see cref="IndexState.Error"/> state.</summary>
    Errored,
}
