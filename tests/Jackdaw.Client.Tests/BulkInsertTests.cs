using System.Net;
using System.Net.Sockets;
using System.Text.Json.Nodes;
using Jackdaw.Client.Tests.Infrastructure;

namespace Jackdaw.Client.Tests;

public sealed class BulkInsertTests : IDisposable
{
    private readonly FakeJackdaw _fake = new(TestStores.Database);
    private readonly DocumentStore _store;

    public BulkInsertTests() => _store = TestStores.Create(_fake);

    public void Dispose() => _store.Dispose();

    [Fact]
    public async Task DocumentsStreamAsChunkedNdjsonWhileTheProducerIsStillWriting()
    {
        var firstLine = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        _fake.OnBulkInsertLine = _ => firstLine.TrySetResult();
        const int Count = 3000;

        await using (var bulk = _store.BulkInsert())
        {
            for (var i = 0; i < Count; i++)
            {
                await bulk.StoreAsync(new User { Id = $"users/{i}", Name = $"user {i}", Tags = ["a", "b"] });
            }

            // The server has parsed lines although the stream is still open.
            await firstLine.Task.WaitAsync(TimeSpan.FromSeconds(30));
            Assert.InRange(_fake.BulkInsertLinesReceived, 1, Count - 1);
            Assert.Equal(Count, bulk.DocumentsSent);
        }

        var request = Assert.Single(_fake.Requests);
        Assert.Equal(("POST", "/databases/db/bulk_insert", "application/x-ndjson", true), (request.Method, request.PathAndQuery, request.ContentType, request.Chunked));
        Assert.Equal(Count, _fake.Count(TestStores.Database));
        Assert.Equal("user 2999", (string?)_fake.Stored(TestStores.Database, "users/2999")!["Name"]);
    }

    [Fact]
    public async Task EachLineHoldsIdAndDocumentWithMetadataAndWithoutTheIdProperty()
    {
        var lines = new List<string>();
        var capture = new CapturingHandler(lines);
        using var store = new DocumentStore { Urls = ["http://jackdaw.test"], Database = "db", HttpMessageHandlerFactory = () => capture }.Initialize();

        await using (var bulk = store.BulkInsert())
        {
            await bulk.StoreAsync(new User { Id = "users/1", Name = "Ann" });
            await bulk.StoreAsync(new Company { Name = "Acme" }, "companies/7");
            await bulk.StoreAsync(new User { Name = "Meta" }, "users/2", new Dictionary<string, object?> { ["Source"] = "import" });
        }

        Assert.Equal(3, lines.Count);
        var first = JsonNode.Parse(lines[0])!;
        Assert.Equal("users/1", (string?)first["Id"]);
        Assert.Equal("Ann", (string?)first["Document"]!["Name"]);
        Assert.Null(first["Document"]!["Id"]);
        Assert.Equal("Users", (string?)first["Document"]!["@metadata"]!["@collection"]);
        Assert.Equal(typeof(User).FullName + ", Jackdaw.Client.Tests", (string?)first["Document"]!["@metadata"]!["Jackdaw-Clr-Type"]);
        Assert.Equal("companies/7", (string?)JsonNode.Parse(lines[1])!["Id"]);
        Assert.Equal("Companies", (string?)JsonNode.Parse(lines[1])!["Document"]!["@metadata"]!["@collection"]);
        Assert.Equal("import", (string?)JsonNode.Parse(lines[2])!["Document"]!["@metadata"]!["Source"]);
    }

    [Fact]
    public async Task EntitiesWithoutIdsGetUniqueTimeOrderedIdsWrittenBack()
    {
        var users = Enumerable.Range(0, 100).Select(i => new User { Name = $"u{i}" }).ToList();
        await using (var bulk = _store.BulkInsert())
        {
            foreach (var user in users)
            {
                await bulk.StoreAsync(user);
            }
        }

        Assert.All(users, u => Assert.StartsWith("users/", u.Id));
        Assert.Equal(100, users.Select(u => u.Id).Distinct().Count());
        Assert.Equal(100, _fake.Count(TestStores.Database));
        Assert.Equal("u42", (string?)_fake.Stored(TestStores.Database, users[42].Id!)!["Name"]);
    }

    [Fact]
    public async Task DisposeReportsTheServersCount()
    {
        var bulk = _store.BulkInsert();
        await bulk.StoreAsync(new User { Id = "users/1" });
        await bulk.DisposeAsync();

        Assert.Equal(1, bulk.DocumentsCommitted);
    }

    [Fact]
    public async Task ABulkInsertWithNoDocumentsSendsNoRequest()
    {
        await using (_store.BulkInsert())
        {
        }

        Assert.Empty(_fake.Requests);
    }

    [Fact]
    public async Task AServerErrorMidStreamThrowsBulkInsertExceptionWithTheServersMessage()
    {
        _fake.BulkInsertFailAtLine = 2500;
        var error = await Assert.ThrowsAsync<BulkInsertException>(async () =>
        {
            await using var bulk = _store.BulkInsert();
            for (var i = 0; i < 20_000; i++)
            {
                await bulk.StoreAsync(new User { Id = $"users/{i}", Name = new string('x', 100) });
            }
        });

        Assert.Equal("Malformed document on line 2500; 2000 documents were committed before it.", error.Message);
        Assert.Equal(HttpStatusCode.BadRequest, error.StatusCode);
        Assert.Equal("BadRequestException", error.ServerErrorType);
        Assert.IsType<BadRequestException>(error.InnerException);
        Assert.Equal(2000, _fake.Count(TestStores.Database));
    }

    [Fact]
    public async Task AServerErrorOnTheLastLinesIsThrownByDispose()
    {
        _fake.BulkInsertFailAtLine = 3;
        var bulk = _store.BulkInsert();
        for (var i = 0; i < 3; i++)
        {
            await bulk.StoreAsync(new User { Id = $"users/{i}" });
        }

        var error = await Assert.ThrowsAsync<BulkInsertException>(() => bulk.DisposeAsync().AsTask());

        Assert.Contains("line 3", error.Message);
        Assert.Null(bulk.DocumentsCommitted);
    }

    [Fact]
    public async Task AnUnknownDatabaseThrowsBulkInsertExceptionWrappingDatabaseDoesNotExist()
    {
        var error = await Assert.ThrowsAsync<BulkInsertException>(async () =>
        {
            await using var bulk = _store.BulkInsert("nope");
            await bulk.StoreAsync(new User { Id = "users/1" });
        });

        Assert.IsType<DatabaseDoesNotExistException>(error.InnerException);
        Assert.Contains("nope", error.Message);
    }

    [Fact]
    public async Task AServerThatIsDownGivesServerUnavailableException()
    {
        int port;
        using (var listener = new TcpListener(IPAddress.Loopback, 0))
        {
            listener.Start();
            port = ((IPEndPoint)listener.LocalEndpoint).Port;
        }

        using var store = new DocumentStore { Urls = [$"http://127.0.0.1:{port}"], Database = "db" }.Initialize();
        await Assert.ThrowsAsync<ServerUnavailableException>(async () =>
        {
            await using var bulk = store.BulkInsert();
            for (var i = 0; i < 10_000; i++)
            {
                await bulk.StoreAsync(new User { Id = $"users/{i}", Name = new string('x', 100) });
            }
        });
    }

    [Fact]
    public async Task CancellingTheOperationsTokenStopsTheStream()
    {
        using var cts = new CancellationTokenSource();
        _fake.OnBulkInsertLine = line =>
        {
            if (line == 100)
            {
                cts.Cancel();
            }
        };

        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () =>
        {
            await using var bulk = _store.BulkInsert(token: cts.Token);
            for (var i = 0; i < 1_000_000; i++)
            {
                await bulk.StoreAsync(new User { Id = $"users/{i}", Name = new string('x', 100) });
            }
        });
    }

    [Fact]
    public async Task StoreAfterDisposeThrowsObjectDisposed()
    {
        var bulk = _store.BulkInsert();
        await bulk.DisposeAsync();
        await Assert.ThrowsAsync<ObjectDisposedException>(() => bulk.StoreAsync(new User()));
    }

    /// <summary>Reads the whole NDJSON body and answers with its line count.</summary>
    private sealed class CapturingHandler(List<string> lines) : HttpMessageHandler
    {
        protected override async Task<HttpResponseMessage> SendAsync(HttpRequestMessage request, CancellationToken cancellationToken)
        {
            var body = await request.Content!.ReadAsStringAsync(cancellationToken);
            lines.AddRange(body.Split('\n', StringSplitOptions.RemoveEmptyEntries));
            Assert.EndsWith("\n", body);
            return FakeJackdaw.Json(HttpStatusCode.OK, new JsonObject { ["Count"] = lines.Count });
        }
    }
}
