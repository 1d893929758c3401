using Jackdaw.Server.Documents.Commands;
using Jackdaw.Server.Wire;
using Jackdaw.Server.Tests.Infrastructure;
using Jackdaw.Storage.Blittable;
using Jackdaw.Server.Errors;

namespace Jackdaw.Server.Tests.Documents;

/// <summary>Batches of one bulk-insert stream queued together: none commits after one that failed.</summary>
public class BatchStreamTests(ServerFixture fixture) : IClassFixture<ServerFixture>
{
    private static BatchOperation Put(JsonOperationContext context, string id, string? expectedChangeVector = null)
    {
        var document = context.Parse("{\"N\":1}"u8, BlittableMode.Disk);
        return new BatchOperation(id, new DocumentToPut(id, document, null, expectedChangeVector), expectedChangeVector);
    }

    [Fact]
    public async Task ABatchQueuedAfterAFailedOneOfTheSameStreamFailsToo()
    {
        var name = await fixture.CreateDatabaseAsync();
        var database = fixture.Server.Host.Server.Databases.GetDatabase(name);
        using var context = new JsonOperationContext();
        var stream = new BatchStream();
        // Every document is parsed before anything is queued: a context is not thread-safe, and the
        // merger starts using it (stamping metadata) as soon as the first batch is queued.
        BatchOperation[] first = [Put(context, "first/1"), Put(context, "first/2", "A:99-nosuchdb")];
        BatchOperation[] later = [Put(context, "after/1")];
        BatchOperation[] others = [Put(context, "other/1")];
        // The first batch fails when executed (a document that must exist does not).
        var failing = database.Merger.EnqueueAsync(new BatchCommand(first, context, stream));
        var after = database.Merger.EnqueueAsync(new BatchCommand(later, context, stream));
        // Another stream is not affected.
        var other = database.Merger.EnqueueAsync(new BatchCommand(others, context, new BatchStream()));

        await Assert.ThrowsAsync<ConcurrencyException>(() => failing);
        await Assert.ThrowsAsync<InvalidOperationException>(() => after);
        await other;
        Assert.True(stream.Failed);
        using var reader = database.BeginRead();
        Assert.False(reader.TryGet("first/1", out _));
        Assert.False(reader.TryGet("after/1", out _));
        Assert.True(reader.TryGet("other/1", out _));
    }
}
