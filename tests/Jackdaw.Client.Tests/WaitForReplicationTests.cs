using System.Collections.Concurrent;
using System.Net;
using Jackdaw.Client.Tests.Infrastructure;

namespace Jackdaw.Client.Tests;

/// <summary>What a session that waits for replicas sends, and how it reads a replication timeout.</summary>
public sealed class WaitForReplicationTests
{
    private readonly FakeJackdaw _fake = new(TestStores.Database);

    [Fact]
    public async Task TheSaveCarriesRavenDbsWriteAssuranceParameters()
    {
        using var store = TestStores.Create(_fake);
        using var session = store.OpenAsyncSession();
        session.Advanced.WaitForReplicationAfterSaveChanges(TimeSpan.FromSeconds(5), throwOnTimeout: true, replicas: 2);
        await session.StoreAsync(new User { Name = "Ann" }, "users/1");
        await session.SaveChangesAsync();

        var save = Assert.Single(_fake.RequestsTo("/bulk_docs"));
        Assert.Equal("/databases/db/bulk_docs?waitForReplicasTimeout=00%3A00%3A05&throwOnTimeoutInWaitForReplicas=true&numberOfReplicasToWaitFor=2", save.PathAndQuery);
    }

    [Fact]
    public async Task TheDefaultsAreOneReplicaTheConventionsTimeoutAndThrowing()
    {
        using var store = TestStores.Create(_fake, s => s.Conventions.WaitForReplicationAfterSaveChangesTimeout = TimeSpan.FromMilliseconds(1500));
        using var session = store.OpenAsyncSession();
        session.Advanced.WaitForReplicationAfterSaveChanges();
        await session.StoreAsync(new User { Name = "Ann" }, "users/1");
        await session.SaveChangesAsync();

        Assert.Equal(
            "/databases/db/bulk_docs?waitForReplicasTimeout=00%3A00%3A01.5000000&throwOnTimeoutInWaitForReplicas=true&numberOfReplicasToWaitFor=1",
            Assert.Single(_fake.RequestsTo("/bulk_docs")).PathAndQuery);
    }

    [Fact]
    public async Task TheBuilderFormAsksForAMajorityAndWaitsForIndexesAfterTheReplicas()
    {
        using var store = TestStores.Create(_fake);
        using var session = store.OpenAsyncSession();
        session.Advanced.WaitForReplicationAfterSaveChanges(o => o.WithTimeout(TimeSpan.FromMinutes(1)).ThrowOnTimeout(false).Majority(true));
        session.Advanced.WaitForIndexesAfterSaveChanges(TimeSpan.FromSeconds(3), indexes: "Users/ByName");
        await session.StoreAsync(new User { Name = "Ann" }, "users/1");
        await session.SaveChangesAsync();
        // Every save of the session waits.
        await session.StoreAsync(new User { Name = "Bob" }, "users/2");
        await session.SaveChangesAsync();

        Assert.All(_fake.RequestsTo("/bulk_docs"), save => Assert.Equal(
            "/databases/db/bulk_docs?waitForReplicasTimeout=00%3A01%3A00&throwOnTimeoutInWaitForReplicas=false&numberOfReplicasToWaitFor=majority"
            + "&waitForIndexesTimeout=00%3A00%3A03&waitForIndexThrow=true&waitForSpecificIndex=Users%2FByName",
            save.PathAndQuery));
        Assert.Equal(2, _fake.RequestsTo("/bulk_docs").Count);
    }

    [Fact]
    public void ANegativeNumberOfReplicasIsRefused()
    {
        using var store = TestStores.Create(_fake);
        using var session = store.OpenAsyncSession();

        Assert.Throws<ArgumentOutOfRangeException>(() => session.Advanced.WaitForReplicationAfterSaveChanges(replicas: -1));
        Assert.Throws<ArgumentOutOfRangeException>(() => session.Advanced.WaitForReplicationAfterSaveChanges(o => o.NumberOfReplicas(-1)));
    }

    [Theory]
    [InlineData("TimeoutException")]
    [InlineData("RavenTimeoutException")]
    public async Task AReplicationTimeoutIsAServerTimeoutExceptionAndIsNotSentToAnotherNode(string type)
    {
        var hosts = new ConcurrentQueue<string>();
        _fake.Intercept = r => r.PathAndQuery.Contains("/bulk_docs", StringComparison.Ordinal)
            ? FakeJackdaw.Error(HttpStatusCode.RequestTimeout, type, "Could not verify that etag 12 was replicated to 2 servers in 00:00:05.")
            : null;
        using var store = TwoNodeStore(hosts);
        using var session = store.OpenAsyncSession();
        session.Advanced.WaitForReplicationAfterSaveChanges(TimeSpan.FromSeconds(5), replicas: 2);
        await session.StoreAsync(new User { Name = "Ann" }, "users/1");

        var error = await Assert.ThrowsAsync<ServerTimeoutException>(() => session.SaveChangesAsync());

        Assert.Contains("was replicated to 2 servers", error.Message);
        Assert.Equal(type, error.ServerErrorType);
        Assert.Equal(["a.test"], hosts);
    }

    [Fact]
    public async Task A503SendsTheSameSaveToTheNextNode()
    {
        var hosts = new ConcurrentQueue<string>();
        _fake.Intercept = r => r.PathAndQuery.Contains("/bulk_docs", StringComparison.Ordinal) && hosts.Count == 1
            ? FakeJackdaw.Error(HttpStatusCode.ServiceUnavailable, "DatabaseDisabledException", "Node a cannot serve the database now.")
            : null;
        using var store = TwoNodeStore(hosts);
        using var session = store.OpenAsyncSession();
        await session.StoreAsync(new User { Name = "Ann" }, "users/1");
        await session.SaveChangesAsync();

        Assert.Equal(["a.test", "b.test"], hosts);
        Assert.Equal(2, _fake.RequestsTo("/bulk_docs").Count);
        Assert.Equal(_fake.RequestsTo("/bulk_docs")[0].Body, _fake.RequestsTo("/bulk_docs")[1].Body);
        Assert.NotNull(_fake.Stored(TestStores.Database, "users/1"));
    }

    /// <summary>A store whose two URLs (its nodes, topology updates off) both reach the fake; each request's host is recorded.</summary>
    private DocumentStore TwoNodeStore(ConcurrentQueue<string> hosts)
    {
        var store = new DocumentStore
        {
            Urls = ["http://a.test", "http://b.test"],
            Database = TestStores.Database,
            HttpMessageHandlerFactory = () => new HostRecorder(_fake, hosts),
        };
        store.Conventions.DisableTopologyUpdates = true;
        return store.Initialize();
    }

    private sealed class HostRecorder(FakeJackdaw inner, ConcurrentQueue<string> hosts) : DelegatingHandler(inner)
    {
        protected override Task<HttpResponseMessage> SendAsync(HttpRequestMessage request, CancellationToken cancellationToken)
        {
            if (request.RequestUri!.AbsolutePath.Contains("/bulk_docs", StringComparison.Ordinal))
            {
                hosts.Enqueue(request.RequestUri.Host);
            }

            return base.SendAsync(request, cancellationToken);
        }
    }
}
