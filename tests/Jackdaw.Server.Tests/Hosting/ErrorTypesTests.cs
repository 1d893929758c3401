using System.Net;
using System.Reflection;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Hosting;

/// <summary>
/// Every error <c>Type</c> the server gives follows one rule (an exception name, as RavenDB's
/// clients expect), is produced by a real request, and is listed in docs/architecture.md.
/// </summary>
public sealed class ErrorTypesTests(Infrastructure.ServerFixture fixture) : IClassFixture<Infrastructure.ServerFixture>
{
    private HttpClient Client => fixture.Client;

    private static IReadOnlyList<string> AllTypes() =>
        typeof(ErrorTypes).GetFields(BindingFlags.Public | BindingFlags.Static)
            .Where(f => f.IsLiteral)
            .Select(f => (string)f.GetRawConstantValue()!)
            .ToList();

    [Fact]
    public void EveryErrorTypeIsAnExceptionName()
    {
        var types = AllTypes();
        Assert.NotEmpty(types);
        Assert.All(types, type => Assert.Matches("^[A-Z][A-Za-z]+Exception$", type));
        Assert.Equal(types.Count, types.Distinct(StringComparer.Ordinal).Count());
    }

    [Fact]
    public void EveryErrorTypeIsListedInTheArchitectureDocument()
    {
        var document = File.ReadAllText(RepositoryFile("docs/architecture.md"));
        Assert.All(AllTypes(), type => Assert.Contains($"`{type}`", document, StringComparison.Ordinal));
    }

    [Fact]
    public void EveryErrorTypeIsProducedByARequestInThisClass()
    {
        // The theory below and the facts after it exercise each type; this keeps the list in step
        // when a type is added.
        string[] covered =
        [
            ErrorTypes.BadRequest, ErrorTypes.InvalidJson, ErrorTypes.RouteNotFound, ErrorTypes.MethodNotAllowed,
            ErrorTypes.PayloadTooLarge, ErrorTypes.InternalServerError, ErrorTypes.Concurrency,
            ErrorTypes.DatabaseDoesNotExist, ErrorTypes.DatabaseAlreadyExists, ErrorTypes.DocumentDoesNotExist,
            ErrorTypes.DiskFull, ErrorTypes.DatabaseUnavailable, ErrorTypes.FeatureNotSupported, ErrorTypes.InvalidQuery,
            ErrorTypes.IndexCompilation, ErrorTypes.IndexDoesNotExist, ErrorTypes.Timeout, ErrorTypes.IndexLocked,
            ErrorTypes.SubscriptionDoesNotExist, ErrorTypes.SubscriptionAlreadyExists,
            ErrorTypes.AnalyzerCompilation, ErrorTypes.AnalyzerInUse, ErrorTypes.Authorization, ErrorTypes.Backup,
            ErrorTypes.JavaScript, ErrorTypes.AttachmentDoesNotExist, ErrorTypes.DocumentConflict, ErrorTypes.NotLeader,
        ];
        Assert.Equal(AllTypes().Order(StringComparer.Ordinal), covered.Order(StringComparer.Ordinal));
    }

    [Fact]
    public async Task DocumentConflictException()
    {
        // Two nodes that keep conflicts, the same id written on each before they are wired.
        await using var nodes = await Replication.ReplicationNodes.StartAsync(wired: false, "A", "B");
        for (var node = 0; node < 2; node++)
        {
            using var solver = await nodes.Client(node).PutAsync($"/databases/{Replication.ReplicationNodes.Database}/admin/replication/conflicts/solver", Api.Json("""{"ResolveToLatest":false}"""));
            Assert.Equal(HttpStatusCode.OK, solver.StatusCode);
            await nodes.PutAsync(node, "users/1", new { Node = node });
        }
        nodes.Wire();
        HttpStatusCode status = default;
        await Poll.UntilAsync(async () =>
        {
            using var get = await nodes.Client(0).GetAsync($"/databases/{Replication.ReplicationNodes.Database}/docs?id=users/1");
            status = get.StatusCode;
            if (status != HttpStatusCode.Conflict)
            {
                return false;
            }
            var message = await Api.AssertErrorAsync(get, HttpStatusCode.Conflict, "DocumentConflictException");
            Assert.Contains("users/1", message, StringComparison.Ordinal);
            return true;
        }, TimeSpan.FromSeconds(60), "the conflict to reach node A");
    }

    [Fact]
    public async Task NotLeaderException()
    {
        // A node waiting to be added leads no cluster: a change of the cluster sent to it is a 503
        // (RavenDB's clients try the next node).
        await using var passive = await InProcessServer.StartAsync("--Cluster:Passive=true");
        using var response = await passive.Client.PutAsync("/admin/cluster/node?url=http://127.0.0.1:9", null);
        var message = await Api.AssertErrorAsync(response, HttpStatusCode.ServiceUnavailable, "NotLeaderException");
        Assert.Contains("add nodes on a member", message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task JavaScriptException()
    {
        var db = await fixture.CreateDatabaseAsync();
        using (var put = await Client.PutAsync($"/databases/{db}/docs?id=a", Api.Json("{}")))
        {
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
        }
        using var request = new HttpRequestMessage(HttpMethod.Patch, $"/databases/{db}/docs?id=a") { Content = Api.Json("""{"Patch":{"Script":"this.A = 1;\nthrow new Error('no');"}}""") };
        using var response = await Client.SendAsync(request);
        var message = await Api.AssertErrorAsync(response, HttpStatusCode.BadRequest, "JavaScriptException");
        Assert.Contains("line 2", message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task AttachmentDoesNotExistException()
    {
        var db = await fixture.CreateDatabaseAsync();
        using (var put = await Client.PutAsync($"/databases/{db}/docs?id=a", Api.Json("{}")))
        {
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
        }
        using var response = await Client.GetAsync($"/databases/{db}/attachments?id=a&name=missing.png");
        var message = await Api.AssertErrorAsync(response, HttpStatusCode.NotFound, "AttachmentDoesNotExistException");
        Assert.Contains("missing.png", message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task BadRequestException()
    {
        var db = await fixture.CreateDatabaseAsync();
        using var response = await Client.PutAsync($"/databases/{db}/docs?id=%00x", Api.Json("{}"));
        await Api.AssertErrorAsync(response, HttpStatusCode.BadRequest, "BadRequestException");
    }

    [Theory]
    [InlineData("{\"Name\":")]
    [InlineData("[1,2]")]
    [InlineData("{\"a\":1,\"a\":2}")]
    public async Task InvalidJsonException(string body)
    {
        var db = await fixture.CreateDatabaseAsync();
        using var response = await Client.PutAsync($"/databases/{db}/docs?id=a", Api.Json(body));
        await Api.AssertErrorAsync(response, HttpStatusCode.BadRequest, "InvalidJsonException");
    }

    [Fact]
    public async Task RouteNotFoundException()
    {
        using var response = await Client.GetAsync("/no/such/route");
        await Api.AssertErrorAsync(response, HttpStatusCode.NotFound, "RouteNotFoundException");
    }

    [Fact]
    public async Task MethodNotAllowedException()
    {
        using var response = await Client.DeleteAsync("/build/version");
        await Api.AssertErrorAsync(response, HttpStatusCode.MethodNotAllowed, "MethodNotAllowedException");
    }

    [Fact]
    public async Task PayloadTooLargeException()
    {
        var db = await fixture.CreateDatabaseAsync();
        // A body over the largest allowed (64 MiB in this fixture); Expect: 100-continue lets the
        // server refuse it before it is sent.
        using var request = new HttpRequestMessage(HttpMethod.Put, $"/databases/{db}/docs?id=big")
        {
            Content = new ByteArrayContent(new byte[65 * 1024 * 1024]),
        };
        request.Headers.ExpectContinue = true;
        using var response = await Client.SendAsync(request);
        await Api.AssertErrorAsync(response, HttpStatusCode.RequestEntityTooLarge, "PayloadTooLargeException");
    }

    [Fact]
    public async Task InternalServerErrorException()
    {
        using var response = await Client.GetAsync("/test/throw");
        await Api.AssertErrorAsync(response, HttpStatusCode.InternalServerError, "InternalServerErrorException");
    }

    [Fact]
    public async Task ConcurrencyException()
    {
        var db = await fixture.CreateDatabaseAsync();
        using (var first = await Client.PutAsync($"/databases/{db}/docs?id=a", Api.Json("{}")))
        {
            Assert.Equal(HttpStatusCode.Created, first.StatusCode);
        }
        using var request = Api.Request(HttpMethod.Put, $"/databases/{db}/docs?id=a", "{}", ifMatch: "\"A:999-nope\"");
        using var response = await Client.SendAsync(request);
        await Api.AssertErrorAsync(response, HttpStatusCode.Conflict, "ConcurrencyException");
    }

    [Fact]
    public async Task DatabaseDoesNotExistException()
    {
        using var response = await Client.GetAsync("/databases/never-made/docs?id=a");
        await Api.AssertErrorAsync(response, HttpStatusCode.ServiceUnavailable, "DatabaseDoesNotExistException");
        Assert.Equal("never-made", response.Headers.GetValues("Database-Missing").Single());
    }

    [Fact]
    public async Task DatabaseAlreadyExistsException()
    {
        var db = await fixture.CreateDatabaseAsync();
        using var response = await Client.PutAsync($"/admin/databases?name={db}", null);
        await Api.AssertErrorAsync(response, HttpStatusCode.Conflict, "DatabaseAlreadyExistsException");
    }

    [Fact]
    public async Task DocumentDoesNotExistException()
    {
        var db = await fixture.CreateDatabaseAsync();
        using var response = await Client.GetAsync($"/databases/{db}/docs?id=missing");
        await Api.AssertErrorAsync(response, HttpStatusCode.NotFound, "DocumentDoesNotExistException");
    }

    [Fact]
    public async Task DiskFullExceptionThenDatabaseUnavailableException()
    {
        // A server whose storage layer reports a full disk on demand, and waits long before reopening.
        var io = new Jackdaw.Storage.Engine.FaultInjectingStorageIo();
        await using var server = await InProcessServer.StartAsync(options => options.Database = new Jackdaw.Server.Databases.DocumentDatabaseOptions
        {
            StorageIo = io,
            FirstReopenDelay = TimeSpan.FromHours(1),
        });
        using (await server.Client.PutAsync("/admin/databases?name=errors", null))
        {
        }

        io.DiskFull = true;
        using (var full = await server.Client.PutAsync("/databases/errors/docs?id=a", Api.Json("{}")))
        {
            await Api.AssertErrorAsync(full, HttpStatusCode.InsufficientStorage, "DiskFullException");
        }

        // The next request sees the failed storage and schedules the reopen (an hour away here);
        // once the failed database is unloaded, requests get 503 until the reopen happens.
        using (await server.Client.GetAsync("/databases/errors/docs?id=a"))
        {
        }
        await server.Host.Server.Databases.UnloadAsync("errors");
        using var unavailable = await server.Client.GetAsync("/databases/errors/docs?id=a");
        await Api.AssertErrorAsync(unavailable, HttpStatusCode.ServiceUnavailable, "DatabaseUnavailableException");
    }

    [Fact]
    public async Task FeatureNotSupportedException()
    {
        // Under a database, a route Jackdaw does not have is a feature it does not have (RavenDB's
        // clients would read a 404 as "no such item").
        var db = await fixture.CreateDatabaseAsync();
        using var response = await Client.GetAsync($"/databases/{db}/counters?docId=users/1");
        await Api.AssertErrorAsync(response, (HttpStatusCode)501, "FeatureNotSupportedException");
    }

    [Fact]
    public async Task InvalidQueryException()
    {
        var db = await fixture.CreateDatabaseAsync();
        using var response = await Client.PostAsync($"/databases/{db}/queries", Api.Json("{\"Query\":\"from Users where\"}"));
        var message = await Api.AssertErrorAsync(response, HttpStatusCode.BadRequest, "InvalidQueryException");
        Assert.Contains("position 16", message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task IndexCompilationException()
    {
        var db = await fixture.CreateDatabaseAsync();
        using var response = await Client.PutAsync($"/databases/{db}/admin/indexes", Api.Json("{\"Indexes\":[{\"Name\":\"Orders/Empty\",\"Maps\":[]}]}"));
        var message = await Api.AssertErrorAsync(response, HttpStatusCode.BadRequest, "IndexCompilationException");
        Assert.Contains("Orders/Empty", message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task IndexDoesNotExistException()
    {
        var db = await fixture.CreateDatabaseAsync();
        using var response = await Client.GetAsync($"/databases/{db}/indexes/stats?name=NoSuchIndex");
        await Api.AssertErrorAsync(response, HttpStatusCode.NotFound, "IndexDoesNotExistException");
    }

    [Fact]
    public async Task IndexLockedException()
    {
        var db = await fixture.CreateDatabaseAsync();
        using (var put = await Client.PutAsync($"/databases/{db}/admin/indexes", Api.Json("{\"Indexes\":[{\"Name\":\"L\",\"Maps\":[\"map('A', a => ({ B: a.B }))\"]}]}")))
        {
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
        }
        using (await Client.PostAsync($"/databases/{db}/indexes/set-lock", Api.Json("{\"IndexNames\":[\"L\"],\"Mode\":\"LockedError\"}")))
        {
        }
        using var response = await Client.PutAsync($"/databases/{db}/admin/indexes", Api.Json("{\"Indexes\":[{\"Name\":\"L\",\"Maps\":[\"map('A', a => ({ C: a.C }))\"]}]}"));
        await Api.AssertErrorAsync(response, HttpStatusCode.Conflict, "IndexLockedException");
    }

    [Fact]
    public async Task AnalyzerCompilationException()
    {
        var db = await fixture.CreateDatabaseAsync();
        using var response = await Client.PutAsync($"/databases/{db}/admin/analyzers", Api.Json("{\"Analyzers\":[{\"Name\":\"A\",\"Code\":\"class A : Analyzer { }\"}]}"));
        await Api.AssertErrorAsync(response, HttpStatusCode.BadRequest, "AnalyzerCompilationException");
    }

    [Fact]
    public async Task AnalyzerInUseException()
    {
        var db = await fixture.CreateDatabaseAsync();
        using (var put = await Client.PutAsync($"/databases/{db}/admin/analyzers", Api.Json("{\"Analyzers\":[{\"Name\":\"A\",\"Code\":\"WhitespaceAnalyzer\"}]}")))
        {
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
        }
        using (var put = await Client.PutAsync($"/databases/{db}/admin/indexes", Api.Json("{\"Indexes\":[{\"Name\":\"I\",\"Maps\":[\"map('A', a => ({ B: a.B }))\"],\"Fields\":{\"B\":{\"Analyzer\":\"A\"}}}]}")))
        {
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
        }
        using var response = await Client.DeleteAsync($"/databases/{db}/admin/analyzers?name=A");
        await Api.AssertErrorAsync(response, HttpStatusCode.Conflict, "AnalyzerInUseException");
    }

    [Fact]
    public async Task SubscriptionDoesNotExistException()
    {
        var db = await fixture.CreateDatabaseAsync();
        using var response = await Client.DeleteAsync($"/databases/{db}/subscriptions?name=Nope");
        await Api.AssertErrorAsync(response, HttpStatusCode.NotFound, "SubscriptionDoesNotExistException");
    }

    [Fact]
    public async Task SubscriptionAlreadyExistsException()
    {
        var db = await fixture.CreateDatabaseAsync();
        using (await Client.PutAsync($"/databases/{db}/subscriptions", Api.Json("{\"Name\":\"S\",\"Query\":\"from Orders\"}")))
        {
        }
        using var response = await Client.PutAsync($"/databases/{db}/subscriptions", Api.Json("{\"Name\":\"S\",\"Query\":\"from Orders\"}"));
        await Api.AssertErrorAsync(response, HttpStatusCode.Conflict, "SubscriptionAlreadyExistsException");
    }

    [Fact]
    public async Task TimeoutException()
    {
        // A new auto-index cannot index 3,000 documents within a zero wait.
        var db = await fixture.CreateDatabaseAsync();
        var lines = string.Join('\n', Enumerable.Range(1, 3000).Select(i => $"{{\"Type\":\"PUT\",\"Id\":\"items/{i}\",\"Document\":{{\"N\":{i},\"@metadata\":{{\"@collection\":\"Items\"}}}}}}"));
        using (var bulk = await Client.PostAsync($"/databases/{db}/bulk_docs", Api.Json("{\"Commands\":[" + lines.Replace('\n', ',') + "]}")))
        {
            Assert.Equal(HttpStatusCode.OK, bulk.StatusCode);
        }
        using var response = await Client.PostAsync($"/databases/{db}/queries", Api.Json("{\"Query\":\"from Items where N > 5\",\"WaitForNonStaleResults\":true,\"WaitForNonStaleResultsTimeout\":\"00:00:00\"}"));
        Assert.Contains("Auto/Items/ByN", await Api.AssertErrorAsync(response, HttpStatusCode.RequestTimeout, "TimeoutException"), StringComparison.Ordinal);
    }

    [Fact]
    public async Task AuthorizationException()
    {
        // Only a secured server refuses; tests/Security has the cases, this is the type's one answer.
        await using var secured = await SecuredServer.StartAsync();
        using var response = await secured.Client(null).GetAsync("/databases");
        await Api.AssertErrorAsync(response, HttpStatusCode.Unauthorized, "AuthorizationException");
    }

    [Fact]
    public async Task BackupException()
    {
        // A restore from a folder that holds no snapshot is refused by the request itself.
        using var empty = new TempFolder("jackdaw-empty-backup");
        var body = System.Text.Json.JsonSerializer.Serialize(new { DatabaseName = "restored-" + Guid.NewGuid().ToString("N"), BackupLocation = empty.Path });
        using var response = await Client.PostAsync("/admin/restore/database", Api.Json(body));
        Assert.Contains(empty.Path, await Api.AssertErrorAsync(response, HttpStatusCode.BadRequest, "BackupException"), StringComparison.Ordinal);
    }

    private static string RepositoryFile(string relative)
    {
        for (var dir = new DirectoryInfo(AppContext.BaseDirectory); dir is not null; dir = dir.Parent)
        {
            var candidate = Path.Combine(dir.FullName, relative);
            if (File.Exists(candidate))
            {
                return candidate;
            }
        }
        throw new FileNotFoundException($"{relative} not found above {AppContext.BaseDirectory}.");
    }
}
