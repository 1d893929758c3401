using System.Collections.Concurrent;
using System.Net;
using Jackdaw.Client.Tests.Infrastructure;
using Jackdaw.Server.Security;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Client.Tests.Integration;

/// <summary>
/// The client against a secured server: every kind of call over TLS with a registered certificate,
/// and each refusal (the server's, and the client's own check of the server's certificate) as the
/// exception that names it.
/// </summary>
public sealed class SecuredServerTests(SecuredServerFixture server) : IClassFixture<SecuredServerFixture>
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(30);

    [Fact]
    public async Task SessionsQueriesAndStreamsWorkWithARegisteredCertificate()
    {
        using var store = await server.NewUserStoreAsync("writer");

        using (var session = store.OpenAsyncSession())
        {
            for (var i = 1; i <= 3; i++)
            {
                await session.StoreAsync(new User { Name = $"user {i}", Age = 20 + i }, $"users/{i}");
            }
            await session.SaveChangesAsync();
        }
        using (var session = store.OpenAsyncSession())
        {
            var loaded = await session.LoadAsync<User>("users/2");
            Assert.Equal("user 2", loaded!.Name);
            loaded.Age = 99;
            session.Delete("users/3");
            await session.SaveChangesAsync();
        }
        using (var session = store.OpenAsyncSession())
        {
            var old = await session.Query<User>()
                .Customize(x => x.WaitForNonStaleResults(ServerFixture.IndexingWait))
                .Where(u => u.Age > 50)
                .ToListAsync();
            Assert.Equal(["users/2"], old.Select(u => u.Id));

            var streamed = new List<string>();
            await foreach (var result in session.Advanced.StreamAsync<User>("users/"))
                streamed.Add(result.Id!);
            Assert.Equal(["users/1", "users/2"], streamed);
        }
    }

    [Fact]
    public async Task ABulkInsertFollowedOnTheChangesFeedRunsOverTls()
    {
        using var store = await server.NewUserStoreAsync("loader");
        var operations = store.Changes().ForAllOperations();
        var completed = new TaskCompletionSource<OperationStatusChange>(TaskCreationOptions.RunContinuationsAsynchronously);
        using var watching = operations.Subscribe(new ActionObserver<OperationStatusChange>(change =>
        {
            if (change.State.Status == OperationStatus.Completed)
            {
                completed.TrySetResult(change);
            }
        }));
        await operations.EnsureSubscribedNow().WaitAsync(Timeout);

        await using (var bulk = store.BulkInsert())
        {
            // A progress handler makes the insert an operation, watched on the same secured feed.
            bulk.OnProgress += (_, _) => { };
            for (var i = 0; i < 500; i++)
            {
                await bulk.StoreAsync(new User { Name = $"user {i}" }, $"users/{i}");
            }
        }

        Assert.Equal(500, (await completed.Task.WaitAsync(Timeout)).State.Result!.Total);
        using var session = store.OpenAsyncSession();
        Assert.Equal("user 499", (await session.LoadAsync<User>("users/499"))!.Name);
    }

    [Fact]
    public async Task TheChangesFeedConnectsWithTheCertificate()
    {
        using var store = await server.NewUserStoreAsync("watcher");
        var users = store.Changes().ForDocumentsInCollection<User>();
        var seen = new TaskCompletionSource<DocumentChange>(TaskCreationOptions.RunContinuationsAsynchronously);
        using var watching = users.Subscribe(new ActionObserver<DocumentChange>(change => seen.TrySetResult(change)));
        await users.EnsureSubscribedNow().WaitAsync(Timeout);

        using (var session = store.OpenAsyncSession())
        {
            await session.StoreAsync(new User { Name = "Ann" }, "users/ann");
            await session.SaveChangesAsync();
        }

        var change = await seen.Task.WaitAsync(Timeout);
        Assert.Equal("users/ann", change.Id);
        Assert.Equal(DocumentChangeTypes.Put, change.Type);
    }

    [Fact]
    public async Task ASubscriptionWorkerConnectsWithTheCertificate()
    {
        using var store = await server.NewUserStoreAsync("worker");
        using (var session = store.OpenAsyncSession())
        {
            for (var i = 0; i < 5; i++)
            {
                await session.StoreAsync(new User { Name = $"user {i}", Age = i }, $"users/{i}");
            }
            await session.SaveChangesAsync();
        }
        var name = await store.Subscriptions.CreateAsync<User>(u => u.Age >= 2);

        var received = new ConcurrentDictionary<string, string>();
        var all = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        await using var worker = store.Subscriptions.GetSubscriptionWorker<User>(new SubscriptionWorkerOptions(name));
        var run = worker.Run(batch =>
        {
            foreach (var item in batch.Items)
            {
                received[item.Id] = item.Result.Name;
            }
            if (received.Count == 3)
            {
                all.TrySetResult();
            }
        });

        await Task.WhenAny(all.Task, run).WaitAsync(Timeout);
        Assert.False(run.IsFaulted, run.Exception?.ToString());
        Assert.Equal(["users/2", "users/3", "users/4"], received.Keys.Order());
    }

    [Fact]
    public async Task WithoutACertificateEveryCallIsA401AuthorizationExceptionWithTheServersMessage()
    {
        var database = await server.NewDatabaseAsync();
        using var store = server.Store(certificate: null, database);

        using var session = store.OpenAsyncSession();
        var load = await Assert.ThrowsAsync<AuthorizationException>(() => session.LoadAsync<User>("users/1"));
        Assert.Equal(HttpStatusCode.Unauthorized, load.StatusCode);
        Assert.Equal(ErrorTypes.Authorization, load.ServerErrorType);
        Assert.Contains("requires a client certificate", load.Message, StringComparison.Ordinal);

        // The refused WebSocket upgrade carries the same message.
        var changes = await Assert.ThrowsAsync<AuthorizationException>(() => store.Changes().EnsureConnectedNow().WaitAsync(Timeout));
        Assert.Equal(HttpStatusCode.Unauthorized, changes.StatusCode);
        Assert.Contains("requires a client certificate", changes.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task AnUnregisteredCertificateIsA403NamingIt()
    {
        var database = await server.NewDatabaseAsync();
        using var stranger = TestCertificates.Client("stranger");
        using var store = server.Store(stranger, database);

        using var session = store.OpenAsyncSession();
        var refused = await Assert.ThrowsAsync<AuthorizationException>(() => session.LoadAsync<User>("users/1"));
        Assert.Equal(HttpStatusCode.Forbidden, refused.StatusCode);
        Assert.Contains("not registered", refused.Message, StringComparison.Ordinal);
        Assert.Contains(stranger.Thumbprint, refused.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task AValidUserWithoutAccessToTheDatabaseIsRefusedByEveryKindOfCall()
    {
        var database = await server.NewDatabaseAsync();
        var other = await server.NewDatabaseAsync();
        var certificate = server.Register("elsewhere", SecurityClearance.ValidUser, (other, DatabaseAccess.ReadWrite));
        using var store = server.Store(certificate, database);
        var expected = $"no access to database '{database}'";

        using (var session = store.OpenAsyncSession())
        {
            var load = await Assert.ThrowsAsync<AuthorizationException>(() => session.LoadAsync<User>("users/1"));
            Assert.Equal(HttpStatusCode.Forbidden, load.StatusCode);
            Assert.Contains(expected, load.Message, StringComparison.Ordinal);
            Assert.Contains("'elsewhere'", load.Message, StringComparison.Ordinal);
        }

        var bulk = await Assert.ThrowsAsync<AuthorizationException>(async () =>
        {
            await using var insert = store.BulkInsert();
            await insert.StoreAsync(new User { Name = "x" }, "users/x");
        });
        Assert.Contains(expected, bulk.Message, StringComparison.Ordinal);

        var changes = await Assert.ThrowsAsync<AuthorizationException>(() => store.Changes().EnsureConnectedNow().WaitAsync(Timeout));
        Assert.Equal(HttpStatusCode.Forbidden, changes.StatusCode);
        Assert.Contains(expected, changes.Message, StringComparison.Ordinal);

        // A worker stops at once: retrying does not register a certificate.
        await using var worker = store.Subscriptions.GetSubscriptionWorker<User>(new SubscriptionWorkerOptions("anything"));
        var subscription = await Assert.ThrowsAsync<AuthorizationException>(() => worker.Run(_ => { }).WaitAsync(Timeout));
        Assert.Contains(expected, subscription.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task ReadAccessReadsButAWriteIsRefusedNamingTheAccessItHas()
    {
        using var store = await server.NewUserStoreAsync("reader", DatabaseAccess.Read);

        using var session = store.OpenAsyncSession();
        Assert.Null(await session.LoadAsync<User>("users/1"));
        await session.StoreAsync(new User { Name = "x" }, "users/x");
        var save = await Assert.ThrowsAsync<AuthorizationException>(() => session.SaveChangesAsync());
        Assert.Contains($"has Read access to database '{store.Database}'", save.Message, StringComparison.Ordinal);
        Assert.Contains("ReadWrite", save.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task AServerCertificateTheOperatingSystemDoesNotTrustIsACertificateExceptionNamingIt()
    {
        var database = await server.NewDatabaseAsync();
        using var store = server.Store(server.ServerCertificate, database, s => s.TrustedServerCertificate = null);

        using var session = store.OpenAsyncSession();
        var load = await Assert.ThrowsAsync<CertificateException>(() => session.LoadAsync<User>("users/1"));
        AssertNamesTheServersCertificate(load);
        Assert.Contains("TrustedServerCertificate", load.Message, StringComparison.Ordinal);

        var changes = await Assert.ThrowsAsync<CertificateException>(() => store.Changes().EnsureConnectedNow().WaitAsync(Timeout));
        AssertNamesTheServersCertificate(changes);

        var bulk = await Assert.ThrowsAsync<CertificateException>(async () =>
        {
            await using var insert = store.BulkInsert();
            await insert.StoreAsync(new User { Name = "x" }, "users/x");
        });
        AssertNamesTheServersCertificate(bulk);
    }

    [Fact]
    public async Task TrustingAnotherCertificateDoesNotTrustTheServers()
    {
        var database = await server.NewDatabaseAsync();
        using var unrelated = TestCertificates.Authority("someone-else");
        using var store = server.Store(server.ServerCertificate, database, s => s.TrustedServerCertificate = unrelated);

        using var session = store.OpenAsyncSession();
        var load = await Assert.ThrowsAsync<CertificateException>(() => session.LoadAsync<User>("users/1"));
        AssertNamesTheServersCertificate(load);
        Assert.Contains("neither DocumentStore.TrustedServerCertificate, CN=someone-else", load.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task AValidationCallbackDecidesAlone()
    {
        var database = await server.NewDatabaseAsync();
        var thumbprint = server.ServerCertificate.Thumbprint;
        var asked = 0;
        using (var accepting = server.Store(server.ServerCertificate, database, s =>
        {
            s.TrustedServerCertificate = null;
            s.ServerCertificateValidation = (_, certificate, _, _) =>
            {
                Interlocked.Increment(ref asked);
                return certificate?.GetCertHashString() == thumbprint;
            };
        }))
        {
            using var session = accepting.OpenAsyncSession();
            Assert.Null(await session.LoadAsync<User>("users/1"));
            Assert.True(Volatile.Read(ref asked) > 0);
        }

        using var refusing = server.Store(server.ServerCertificate, database, s =>
        {
            s.TrustedServerCertificate = null;
            s.ServerCertificateValidation = (_, _, _, _) => false;
        });
        using var refused = refusing.OpenAsyncSession();
        var load = await Assert.ThrowsAsync<CertificateException>(() => refused.LoadAsync<User>("users/1"));
        AssertNamesTheServersCertificate(load);
        Assert.Contains("ServerCertificateValidation refused it", load.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task AServerCertificateIssuedByTheTrustedAuthorityIsTrusted()
    {
        using var authority = TestCertificates.Authority();
        var issued = new SecuredServerFixture(TestCertificates.Server("jackdaw-issued", issuer: authority));
        await issued.InitializeAsync();
        try
        {
            using var publicAuthority = System.Security.Cryptography.X509Certificates.X509CertificateLoader.LoadCertificate(authority.RawData);
            using var store = issued.Store(issued.ServerCertificate, "none", s => s.TrustedServerCertificate = publicAuthority);
            Assert.Empty(await store.Maintenance.GetDatabaseNamesAsync());
        }
        finally
        {
            await issued.DisposeAsync();
        }
    }

    [Fact]
    public async Task AnHttpsUrlToAnUnsecuredServerIsACertificateException()
    {
        var plain = new ServerFixture();
        await plain.InitializeAsync();
        try
        {
            using var store = new DocumentStore
            {
                Urls = [plain.Url.Replace("http://", "https://", StringComparison.Ordinal)],
                Database = "db",
                Certificate = server.ServerCertificate,
                TrustedServerCertificate = server.PublicServerCertificate,
            }.Initialize();

            var failure = await Assert.ThrowsAsync<CertificateException>(() => store.Maintenance.GetDatabaseNamesAsync());
            Assert.Contains("TLS handshake with https://127.0.0.1:", failure.Message, StringComparison.Ordinal);
            Assert.Contains("does not serve https", failure.Message, StringComparison.Ordinal);
        }
        finally
        {
            await plain.DisposeAsync();
        }
    }

    [Fact]
    public async Task AnHttpUrlToTheSecuredServerSaysToUseHttps()
    {
        using var store = new DocumentStore { Urls = [server.Url.Replace("https://", "http://", StringComparison.Ordinal)], Database = "db" }.Initialize();

        var request = await Assert.ThrowsAsync<ServerUnavailableException>(() => store.Maintenance.GetDatabaseNamesAsync());
        Assert.Contains("if this one is secured, use its https:// URL", request.Message, StringComparison.Ordinal);
        var changes = await Assert.ThrowsAsync<ServerUnavailableException>(() => store.Changes().EnsureConnectedNow().WaitAsync(Timeout));
        Assert.Contains("if this one is secured, use its https:// URL", changes.Message, StringComparison.Ordinal);
    }

    private void AssertNamesTheServersCertificate(CertificateException failure)
    {
        Assert.Contains($"the server's certificate CN=jackdaw-test-server (thumbprint {server.ServerCertificate.Thumbprint}) is not trusted", failure.Message, StringComparison.Ordinal);
    }
}
