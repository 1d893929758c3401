using System.Diagnostics;
using System.Globalization;
using System.Text.Json;
using Jackdaw.Client.Tests.Integration;
using JasperFx;
using Marten;

/// <summary>Marten 9 on PostgreSQL: a lightweight query session per query, LINQ on a computed index.</summary>
internal sealed class MartenSide(DocumentStore store) : IQuerySide, IAsyncDisposable
{
    public string Name => "Marten";

    public static MartenSide Open(string connectionString) => new(CreateStore(connectionString));

    private static DocumentStore CreateStore(string connectionString) => DocumentStore.For(options =>
    {
        options.Connection(connectionString);
        options.AutoCreateSchemaObjects = AutoCreate.CreateOrUpdate;
        options.Schema.For<CorpusOrder>().Index(o => o.Company);
    });

    public static async Task LoadAsync(string connectionString)
    {
        await using var store = CreateStore(connectionString);
        await store.Storage.ApplyAllConfiguredChangesToDatabaseAsync();
        var json = new JsonSerializerOptions();
        var batch = new List<CorpusOrder>(5000);
        var count = 0;
        var started = Stopwatch.StartNew();
        foreach (var order in CorpusOrder.ReadCorpus(json))
        {
            batch.Add(order);
            if (batch.Count == batch.Capacity)
            {
                await store.BulkInsertAsync(batch);
                count += batch.Count;
                batch.Clear();
            }
        }
        if (batch.Count > 0)
        {
            await store.BulkInsertAsync(batch);
            count += batch.Count;
        }
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"# Marten: {count} orders stored in {started.Elapsed.TotalSeconds:F1}s"));
        await using var session = store.QuerySession();
        // ANALYZE so the planner knows the index is selective before the first timed query.
        await session.ExecuteAsync(new Npgsql.NpgsqlCommand("ANALYZE"));
    }

    public async Task<int> QueryAsync(string company)
    {
        await using var session = store.QuerySession();
        var orders = await session.Query<CorpusOrder>().Where(o => o.Company == company).ToListAsync();
        return orders.Count;
    }

    public ValueTask DisposeAsync() => store.DisposeAsync();
}
