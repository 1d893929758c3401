namespace Jackdaw.Server.Indexing;

/// <summary>What happened to an index of a store (see <see cref="IndexStore.SubscribeIndexEvents"/>).</summary>
public enum IndexEventKind
{
    /// <summary>An index was created (by a PUT, for a query, or as a <c>ReplacementOf/</c> built side by side).</summary>
    Added,

    /// <summary>An index was deleted (or a replacement dropped before it was swapped in).</summary>
    Removed,

    /// <summary>A replacement built side by side was swapped in under the index's name.</summary>
    ReplacementSwapped,
}
