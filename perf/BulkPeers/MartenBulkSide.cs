using Jackdaw.Client.Tests.Integration;
using JasperFx;
using Marten;

/// <summary>
/// Marten 9 on PostgreSQL: <c>store.BulkInsertAsync(orders)</c> in its default mode (inserts only,
/// batches of 1,000 rows through COPY, one transaction), into the orders' table dropped and made
/// again before each load. The table has Marten's own primary key and no other index.
/// </summary>
internal sealed class MartenBulkSide(DocumentStore store) : IBulkSide, IAsyncDisposable
{
    public string Name => "Marten";

    public static MartenBulkSide Open(string connectionString) => new(DocumentStore.For(options =>
    {
        options.Connection(connectionString);
        options.AutoCreateSchemaObjects = AutoCreate.CreateOrUpdate;
        options.DatabaseSchemaName = "bulk_peers";
        options.Schema.For<CorpusOrder>();
    }));

    public async Task PrepareAsync(string name)
    {
        await store.Advanced.Clean.CompletelyRemoveAsync(typeof(CorpusOrder)).ConfigureAwait(false);
        await store.Storage.ApplyAllConfiguredChangesToDatabaseAsync().ConfigureAwait(false);
    }

    public Task InsertAsync(IReadOnlyList<CorpusOrder> orders) => store.BulkInsertAsync(orders);

    public async Task<long> CountAsync()
    {
        await using var session = store.QuerySession();
        return await session.Query<CorpusOrder>().LongCountAsync().ConfigureAwait(false);
    }

    // The next load drops the table before it starts.
    public Task DropAsync() => Task.CompletedTask;

    public ValueTask DisposeAsync() => store.DisposeAsync();
}
