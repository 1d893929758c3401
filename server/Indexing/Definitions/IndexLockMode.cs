namespace Jackdaw.Server.Indexing.Definitions;

/// <summary>How an index takes a changed definition (RavenDB's lock modes).</summary>
public enum IndexLockMode : byte
{
    /// <summary>A changed definition is built side by side and replaces it.</summary>
    Unlock,

    /// <summary>A changed definition is ignored (the PUT succeeds and changes nothing).</summary>
    LockedIgnore,

    /// <summary>A changed definition is refused with 409 <c>IndexLockedException</c>.</summary>
    LockedError,
}
