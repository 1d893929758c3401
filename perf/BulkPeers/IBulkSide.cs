using Jackdaw.Client.Tests.Integration;

internal interface IBulkSide
{
    string Name { get; }

    /// <summary>Makes an empty target for one load (a fresh database, a fresh table): not timed.</summary>
    Task PrepareAsync(string name);

    /// <summary>Stores <paramref name="orders"/> into the target made last; returns when they are durable.</summary>
    Task InsertAsync(IReadOnlyList<CorpusOrder> orders);

    /// <summary>How many orders the target made last holds (checked after each load, not timed).</summary>
    Task<long> CountAsync();

    /// <summary>Removes the target made last (after its count, not timed).</summary>
    Task DropAsync();
}
