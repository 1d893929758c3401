using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Text.Json.Nodes;
using Jackdaw.Client.Tests.Infrastructure;

namespace Jackdaw.Client.Tests;

public sealed class ErrorTests : IDisposable
{
    private readonly FakeJackdaw _fake = new(TestStores.Database);
    private readonly DocumentStore _store;

    public ErrorTests() => _store = TestStores.Create(_fake);

    public void Dispose() => _store.Dispose();

    [Theory]
    [InlineData(HttpStatusCode.Conflict, "ConcurrencyException", typeof(ConcurrencyException))]
    [InlineData(HttpStatusCode.NotFound, "DocumentDoesNotExistException", typeof(DocumentDoesNotExistException))]
    [InlineData(HttpStatusCode.ServiceUnavailable, "DatabaseDoesNotExistException", typeof(DatabaseDoesNotExistException))]
    [InlineData(HttpStatusCode.Conflict, "DatabaseAlreadyExistsException", typeof(DatabaseAlreadyExistsException))]
    [InlineData(HttpStatusCode.BadRequest, "BadRequestException", typeof(BadRequestException))]
    [InlineData(HttpStatusCode.BadRequest, "InvalidJsonException", typeof(BadRequestException))]
    [InlineData(HttpStatusCode.BadRequest, "InvalidQueryException", typeof(InvalidQueryException))]
    [InlineData(HttpStatusCode.NotFound, "IndexDoesNotExistException", typeof(IndexDoesNotExistException))]
    [InlineData(HttpStatusCode.BadRequest, "IndexCompilationException", typeof(IndexCompilationException))]
    [InlineData(HttpStatusCode.Conflict, "IndexLockedException", typeof(IndexLockedException))]
    [InlineData(HttpStatusCode.RequestTimeout, "TimeoutException", typeof(ServerTimeoutException))]
    [InlineData(HttpStatusCode.RequestEntityTooLarge, "PayloadTooLargeException", typeof(JackdawException))]
    [InlineData(HttpStatusCode.NotFound, "RouteNotFoundException", typeof(JackdawException))]
    [InlineData(HttpStatusCode.InternalServerError, "InternalServerErrorException", typeof(JackdawException))]
    [InlineData(HttpStatusCode.MethodNotAllowed, "MethodNotAllowedException", typeof(JackdawException))]
    public async Task ServerErrorBodiesBecomeTypedExceptionsWithStatusTypeAndMessage(HttpStatusCode status, string type, Type expected)
    {
        _fake.Intercept = _ => FakeJackdaw.Error(status, type, "the server's words");
        using var session = _store.OpenAsyncSession();
        await session.StoreAsync(new User { Id = "users/1" });

        var error = await Assert.ThrowsAnyAsync<JackdawException>(() => session.SaveChangesAsync());

        Assert.IsType(expected, error);
        Assert.Equal(status, error.StatusCode);
        Assert.Equal(type, error.ServerErrorType);
        Assert.Equal("the server's words", error.Message);
    }

    [Fact]
    public async Task ANonJsonErrorBodyIsQuotedInTheMessage()
    {
        _fake.Intercept = _ => new HttpResponseMessage(HttpStatusCode.BadGateway) { Content = new StringContent("<html>proxy down</html>", Encoding.UTF8, "text/html") };
        using var session = _store.OpenAsyncSession();

        var error = await Assert.ThrowsAsync<JackdawException>(() => session.LoadAsync<User>("users/1"));

        Assert.Equal(HttpStatusCode.BadGateway, error.StatusCode);
        Assert.Null(error.ServerErrorType);
        Assert.Contains("502", error.Message);
        Assert.Contains("<html>proxy down</html>", error.Message);
    }

    [Fact]
    public async Task AnUnknownDatabaseThrowsDatabaseDoesNotExistOnLoad()
    {
        using var session = _store.OpenAsyncSession("nope");

        var error = await Assert.ThrowsAsync<DatabaseDoesNotExistException>(() => session.LoadAsync<User>("users/1"));

        Assert.Contains("nope", error.Message);
        Assert.Equal("/databases/nope/docs?id=users%2F1", _fake.Requests.Single().PathAndQuery);
    }

    [Fact]
    public async Task AMalformedBulkDocsCommandThrowsBadRequestWithTheServersMessage()
    {
        _fake.Intercept = r => r.PathAndQuery.EndsWith("bulk_docs", StringComparison.Ordinal)
            ? FakeJackdaw.Error(HttpStatusCode.BadRequest, "BadRequestException", "Command 0: 'Type' must be PUT or DELETE.")
            : null;
        using var session = _store.OpenAsyncSession();
        await session.StoreAsync(new User { Id = "users/1" });

        var error = await Assert.ThrowsAsync<BadRequestException>(() => session.SaveChangesAsync());

        Assert.Equal("Command 0: 'Type' must be PUT or DELETE.", error.Message);
    }

    [Fact]
    public async Task AServerThatIsDownGivesServerUnavailableException()
    {
        var port = ClosedPort();
        using var store = new DocumentStore { Urls = [$"http://127.0.0.1:{port}"], Database = "db" }.Initialize();
        using var session = store.OpenAsyncSession();

        var error = await Assert.ThrowsAsync<ServerUnavailableException>(() => session.LoadAsync<User>("users/1"));

        Assert.Contains($"127.0.0.1:{port}", error.Message);
        Assert.IsType<HttpRequestException>(error.InnerException);
        await Assert.ThrowsAsync<ServerUnavailableException>(() => store.Maintenance.GetDatabaseNamesAsync());
    }

    [Fact]
    public async Task AnUnreachableFirstUrlFailsOverToTheNext()
    {
        var live = new FakeJackdaw("db");
        using var store = new DocumentStore
        {
            Urls = [$"http://127.0.0.1:{ClosedPort()}", "http://127.0.0.1:1"],
            Database = "db",
            HttpMessageHandlerFactory = () => new FailFirstUrlHandler(live),
        }.Initialize();

        Assert.Equal(["db"], await store.Maintenance.GetDatabaseNamesAsync());
        Assert.Equal(["db"], await store.Maintenance.GetDatabaseNamesAsync());

        Assert.Equal(2, live.Requests.Count);
    }

    [Fact]
    public async Task ACancelledTokenCancelsLoadsAndSaves()
    {
        using var cts = new CancellationTokenSource();
        cts.Cancel();
        using var session = _store.OpenAsyncSession();
        await session.StoreAsync(new User { Id = "users/1" });

        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => session.LoadAsync<User>("users/2", cts.Token));
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => session.SaveChangesAsync(cts.Token));
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => _store.Maintenance.GetDatabaseNamesAsync(cts.Token));
        Assert.Empty(_fake.Requests);
    }

    [Fact]
    public async Task CancellingAPendingRequestThrowsOperationCanceledNotServerUnavailable()
    {
        var gate = new TaskCompletionSource();
        using var store = new DocumentStore
        {
            Urls = ["http://jackdaw.test"],
            Database = "db",
            HttpMessageHandlerFactory = () => new HangingHandler(gate),
        }.Initialize();
        using var cts = new CancellationTokenSource();
        using var session = store.OpenAsyncSession();

        var load = session.LoadAsync<User>("users/1", cts.Token);
        await gate.Task.WaitAsync(TimeSpan.FromSeconds(10));
        cts.Cancel();

        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => load);
    }

    [Fact]
    public async Task ARequestOverTheTimeoutIsReportedAsServerUnavailable()
    {
        var gate = new TaskCompletionSource();
        using var store = new DocumentStore
        {
            Urls = ["http://jackdaw.test"],
            Database = "db",
            Conventions = new DocumentConventions { RequestTimeout = TimeSpan.FromMilliseconds(200) },
            HttpMessageHandlerFactory = () => new HangingHandler(gate),
        }.Initialize();
        using var session = store.OpenAsyncSession();

        var error = await Assert.ThrowsAsync<ServerUnavailableException>(() => session.LoadAsync<User>("users/1"));

        Assert.Contains("timeout", error.Message, StringComparison.OrdinalIgnoreCase);
    }

    [Fact]
    public async Task ARequestThatAsksTheServerToWaitLongerThanTheRequestTimeoutIsGivenThatWait()
    {
        // The server answers queries and index tests after 1 s: past the 200 ms request timeout,
        // within the wait for non-stale results they ask for.
        _fake.Intercept = r => r.PathAndQuery.EndsWith("/indexes/test", StringComparison.Ordinal)
            ? FakeJackdaw.Json(HttpStatusCode.OK, new JsonObject { ["IndexName"] = "Users/Try", ["DocumentsProcessed"] = 0, ["TotalResults"] = 0 })
            : null;
        using var store = new DocumentStore
        {
            Urls = ["http://jackdaw.test"],
            Database = TestStores.Database,
            Conventions = new DocumentConventions { RequestTimeout = TimeSpan.FromMilliseconds(200) },
            HttpMessageHandlerFactory = () => new SlowHandler(_fake, TimeSpan.FromSeconds(1)),
        }.Initialize();
        using var session = store.OpenAsyncSession();

        Assert.Empty(await session.Query<User>().Customize(x => x.WaitForNonStaleResults(TimeSpan.FromSeconds(30))).ToListAsync());
        Assert.Empty(await session.Advanced.AsyncRawQuery<User>("from Users").WaitForNonStaleResults(TimeSpan.FromSeconds(30)).ToListAsync());
        var tested = await store.Maintenance.TestIndexAsync(new IndexDefinition { Name = "Users/Try", Maps = ["map('Users', u => ({ Name: u.Name }))"] }, timeout: TimeSpan.FromSeconds(30));
        Assert.Equal("Users/Try", tested.IndexName);

        // A query that does not wait keeps the request timeout.
        var error = await Assert.ThrowsAsync<ServerUnavailableException>(() => session.Query<User>().ToListAsync());
        Assert.Contains("timeout", error.Message, StringComparison.OrdinalIgnoreCase);
    }

    private static int ClosedPort()
    {
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        var port = ((IPEndPoint)listener.LocalEndpoint).Port;
        listener.Stop();
        return port;
    }

    private sealed class HangingHandler(TaskCompletionSource entered) : HttpMessageHandler
    {
        protected override async Task<HttpResponseMessage> SendAsync(HttpRequestMessage request, CancellationToken cancellationToken)
        {
            entered.TrySetResult();
            await Task.Delay(Timeout.Infinite, cancellationToken);
            throw new InvalidOperationException("unreachable");
        }
    }

    /// <summary>Answers every POST after <paramref name="delay"/>, as a server that takes its time.</summary>
    private sealed class SlowHandler(FakeJackdaw inner, TimeSpan delay) : DelegatingHandler(inner)
    {
        protected override async Task<HttpResponseMessage> SendAsync(HttpRequestMessage request, CancellationToken cancellationToken)
        {
            if (request.Method == HttpMethod.Post)
            {
                await Task.Delay(delay, cancellationToken);
            }

            return await base.SendAsync(request, cancellationToken);
        }
    }

    /// <summary>Refuses connections to any URL but port 1, which it serves from the fake.</summary>
    private sealed class FailFirstUrlHandler(FakeJackdaw inner) : DelegatingHandler(inner)
    {
        protected override Task<HttpResponseMessage> SendAsync(HttpRequestMessage request, CancellationToken cancellationToken) =>
            request.RequestUri!.Port == 1
                ? base.SendAsync(request, cancellationToken)
                : throw new HttpRequestException(HttpRequestError.ConnectionError, "Connection refused (127.0.0.1)");
    }
}
