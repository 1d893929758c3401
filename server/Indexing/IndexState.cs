namespace Jackdaw.Server.Indexing;

/// <summary>The state of an index, as RavenDB names them.</summary>
public enum IndexState : byte
{
    Normal,

    /// <summary>An auto-index nobody queried for a while: it does not index until a query needs it.</summary>
    Idle,

    /// <summary>Too many documents failed to map (15% of at least 100 attempts): it stopped until reset.</summary>
    Error,

    /// <summary>Disabled by an operator (persisted): it does not index until enabled.</summary>
    Disabled,
}
