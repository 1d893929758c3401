using Jackdaw.Server.Cluster;
using System.Net;
using System.Security.Cryptography.X509Certificates;
using Jackdaw.Server.Security;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Cluster;

/// <summary>
/// Two secured servers that share their certificate (a cluster certificate, as RavenDB's nodes
/// usually do) form a cluster over HTTPS: Raft's requests, the leader's checks and the requests
/// passed on to the leader (a subscription's command too) and replication's senders present it;
/// Raft's path refuses every other certificate, a ClusterAdmin client's too.
/// Registered client certificates are the cluster's: every node accepts one registered through any.
/// </summary>
public sealed class SecuredClusterTests
{
    /// <summary>Adds passive <paramref name="node"/> to <paramref name="leader"/>'s cluster as <paramref name="tag"/>, and waits for it to learn its tag.</summary>
    private static async Task AddAsync(SecuredServer leader, SecuredServer node, string tag)
    {
        using (var added = await leader.Admin.PutAsync($"/admin/cluster/node?url={Uri.EscapeDataString(node.Url)}&tag={tag}", null))
        {
            Assert.True(added.StatusCode == HttpStatusCode.OK, await added.Content.ReadAsStringAsync());
        }
        await Poll.UntilAsync(() => Task.FromResult(node.Server.Host.Server.Cluster.NodeTag == tag), TestCluster.Timeout, $"{tag} to learn its tag");
    }

    [Fact]
    public async Task SecuredNodesFormAClusterAndRaftsPathRefusesOtherCertificates()
    {
        var certificate = TestCertificates.Server();
        await using var a = await SecuredServer.StartAsync(certificate, pem: false);
        await using var b = await SecuredServer.StartAsync(certificate, pem: false, "--Cluster:Passive=true");
        await AddAsync(a, b, "B");

        // Sent to B, which does not lead: passed on to A with B's certificate.
        using (var created = await b.Admin.PutAsync("/admin/databases?name=Orders&replicationFactor=2", null))
        {
            Assert.True(created.StatusCode == HttpStatusCode.Created, await created.Content.ReadAsStringAsync());
        }
        Assert.Contains("Orders", b.Server.Host.Server.Databases.Names);
        await Poll.UntilAsync(() => Task.FromResult(a.Server.Host.Server.Databases.Names.Contains("Orders")), TestCluster.Timeout, "Orders on A");

        // Replication's push route needs ClusterAdmin: B's sender presents B's certificate.
        using (var put = await b.Admin.PutAsync("/databases/Orders/docs?id=orders/1", new StringContent("""{"Name":"from B","@metadata":{"@collection":"Orders"}}""", System.Text.Encoding.UTF8, "application/json")))
        {
            Assert.True(put.StatusCode == HttpStatusCode.Created, await put.Content.ReadAsStringAsync());
        }
        await Poll.UntilAsync(async () =>
        {
            using var get = await a.Admin.GetAsync("/databases/Orders/docs?id=orders/1");
            return get.StatusCode == HttpStatusCode.OK;
        }, TestCluster.Timeout, "orders/1 replicated from B to A");

        // A subscription created on B: its command goes to the leader with B's certificate.
        using (var subscription = await b.Admin.PutAsync("/databases/Orders/subscriptions", new StringContent("""{"Name":"All","Query":"from Orders"}""", System.Text.Encoding.UTF8, "application/json")))
        {
            Assert.True(subscription.StatusCode == HttpStatusCode.Created, await subscription.Content.ReadAsStringAsync());
        }
        await Poll.UntilAsync(() => Task.FromResult(a.Server.Host.Server.Cluster.State.Subscriptions.Of("Orders").ContainsKey("All")), TestCluster.Timeout, "the subscription in A's state");

        var operatorCertificate = TestCertificates.Client("operator");
        a.Register(operatorCertificate, SecurityClearance.Operator);
        using (var command = await a.Client(operatorCertificate).PostAsync("/admin/cluster/subscription-commands", new StringContent("{}")))
        {
            Assert.Equal(HttpStatusCode.Forbidden, command.StatusCode);
        }
        using (var refused = await a.Client(operatorCertificate).PostAsync("/cluster-consensus/raft", new ByteArrayContent([])))
        {
            Assert.Equal(HttpStatusCode.Forbidden, refused.StatusCode);
        }
        using (var anonymous = await a.Client(null).PostAsync("/cluster-consensus/raft", new ByteArrayContent([])))
        {
            Assert.Equal(HttpStatusCode.Unauthorized, anonymous.StatusCode);
        }
        // A ClusterAdmin that is not a node may manage the cluster, but not speak its Raft protocol.
        var adminCertificate = TestCertificates.Client("cluster-admin");
        a.Register(adminCertificate, SecurityClearance.ClusterAdmin);
        using (var topology = await a.Client(adminCertificate).GetAsync("/cluster/topology"))
        {
            Assert.Equal(HttpStatusCode.OK, topology.StatusCode);
        }
        using (var notANode = await a.Client(adminCertificate).PostAsync("/cluster-consensus/raft", new ByteArrayContent([])))
        {
            Assert.Equal(HttpStatusCode.Forbidden, notANode.StatusCode);
            Assert.Contains("node certificates", await notANode.Content.ReadAsStringAsync());
        }
        // Nor send the leader the commands only nodes send (an acknowledgement would move a position, a promotion send clients to a node still catching up).
        foreach (var path in new[] { "/admin/cluster/subscription-commands", "/admin/cluster/backup-status", "/admin/cluster/promotions" })
        {
            using var forged = await a.Client(adminCertificate).PostAsync(path, new StringContent("{}"));
            Assert.True(forged.StatusCode == HttpStatusCode.Forbidden, $"{path}: {(int)forged.StatusCode} {await forged.Content.ReadAsStringAsync()}");
        }
        Assert.True(a.Server.Host.Server.Cluster.State.IsNodeCertificate(certificate.Thumbprint));
    }

    [Fact]
    public async Task ACertificateReplacedOnTheNodesIsRecordedAsTheirsAndTheClusterGoesOn()
    {
        var certificate = TestCertificates.Server();
        await using var a = await SecuredServer.StartAsync(certificate, pem: false);
        await using var b = await SecuredServer.StartAsync(certificate, pem: false, "--Cluster:Passive=true");
        await AddAsync(a, b, "B");
        var recorded = a.Server.Host.Server.Cluster.State.NodeCertificates;
        Assert.Equal(certificate.GetCertHashString(), recorded["A"]);
        Assert.Equal(certificate.GetCertHashString(), recorded["B"]);

        // The certificate is renewed on both nodes (as a shared one is): the leader records what
        // each presents now, its own through the next leader (it steps down), and Raft goes on.
        var every = ClusterNode.CertificateCheckEvery;
        ClusterNode.CertificateCheckEvery = TimeSpan.FromMilliseconds(500);
        try
        {
            using var renewed = TestCertificates.Server("renewed");
            foreach (var node in new[] { a, b })
            {
                var staged = TestCertificates.WritePfx(renewed, Path.Combine(node.CertificateFolder, "staged.pfx"), SecuredServer.CertificatePassword);
                File.Move(staged, node.CertificatePath, overwrite: true);
            }
            var thumbprint = renewed.GetCertHashString();
            foreach (var node in new[] { a, b })
            {
                await Poll.UntilAsync(() => Task.FromResult(node.Server.Host.Server.Cluster.State.NodeCertificates is var now
                    && now.GetValueOrDefault("A") == thumbprint && now.GetValueOrDefault("B") == thumbprint), TestCluster.Timeout, $"the renewed certificate recorded for A and B on {node.Url}");
            }
            using var admin = b.Client(renewed);
            using var created = await admin.PutAsync("/admin/databases?name=AfterRenewal&replicationFactor=2", null);
            Assert.True(created.StatusCode == HttpStatusCode.Created, await created.Content.ReadAsStringAsync());
        }
        finally
        {
            ClusterNode.CertificateCheckEvery = every;
        }
    }

    [Fact]
    public async Task ACertificateRegisteredThroughOneNodeIsAcceptedByEveryNodeUntilDeletedThroughAnother()
    {
        var certificate = TestCertificates.Server();
        await using var a = await SecuredServer.StartAsync(certificate, pem: false);
        await using var b = await SecuredServer.StartAsync(certificate, pem: false, "--Cluster:Passive=true");
        await using var c = await SecuredServer.StartAsync(certificate, pem: false, "--Cluster:Passive=true");
        // Registered on the lone server: it goes into the state when A founds the cluster.
        var early = TestCertificates.Client("early");
        a.Register(early, SecurityClearance.ValidUser);
        await AddAsync(a, b, "B");
        await AddAsync(a, c, "C");
        SecuredServer[] nodes = [a, b, c];
        async Task<bool> AcceptedEverywhere(X509Certificate2 client, bool accepted)
        {
            foreach (var node in nodes)
            {
                using var answer = await node.Client(client, newConnectionPerRequest: true).GetAsync("/certificates/whoami");
                if ((answer.StatusCode == HttpStatusCode.OK) != accepted)
                {
                    return false;
                }
            }
            return true;
        }
        await Poll.UntilAsync(() => AcceptedEverywhere(early, true), TestCluster.Timeout, "the certificate registered before the cluster accepted on every node");

        // Registered through B, which does not lead: committed by A, then put in every node's store.
        var reporting = TestCertificates.Client("reporting");
        Assert.True(await AcceptedEverywhere(reporting, false));
        var body = $$$"""{"Name":"reporting","Certificate":"{{{Convert.ToBase64String(reporting.RawData)}}}","SecurityClearance":"ValidUser","Permissions":{"Orders":"ReadWrite"}}""";
        using (var put = await b.Admin.PutAsync("/admin/certificates", new StringContent(body, System.Text.Encoding.UTF8, "application/json")))
        {
            Assert.True(put.StatusCode == HttpStatusCode.Created, await put.Content.ReadAsStringAsync());
        }
        // B answered once it held it itself.
        using (var onB = await b.Client(reporting, newConnectionPerRequest: true).GetAsync("/certificates/whoami"))
        {
            Assert.Equal(HttpStatusCode.OK, onB.StatusCode);
        }
        await Poll.UntilAsync(() => AcceptedEverywhere(reporting, true), TestCluster.Timeout, "the certificate registered through B accepted on every node");

        // A bad request is refused by the node it reaches, before anything is committed.
        var etag = a.Server.Host.Server.Cluster.State.Etag;
        using (var bad = await c.Admin.PutAsync("/admin/certificates", new StringContent("""{"Name":"x","Certificate":"not base64"}""", System.Text.Encoding.UTF8, "application/json")))
        {
            Assert.Equal(HttpStatusCode.BadRequest, bad.StatusCode);
        }
        Assert.Equal(etag, a.Server.Host.Server.Cluster.State.Etag);

        // Deleted through C: refused everywhere.
        using (var deleted = await c.Admin.DeleteAsync($"/admin/certificates?thumbprint={reporting.Thumbprint}"))
        {
            Assert.True(deleted.StatusCode == HttpStatusCode.NoContent, await deleted.Content.ReadAsStringAsync());
        }
        using (var onC = await c.Client(reporting, newConnectionPerRequest: true).GetAsync("/certificates/whoami"))
        {
            Assert.NotEqual(HttpStatusCode.OK, onC.StatusCode);
        }
        await Poll.UntilAsync(() => AcceptedEverywhere(reporting, false), TestCluster.Timeout, "the deleted certificate refused on every node");
        Assert.True(await AcceptedEverywhere(early, true));

        // Made through C (the leader makes it, and the key comes back in the answer only), edited through B.
        bool NamedEverywhere(string name) => nodes.All(n => n.Security.Store.All.Any(d => d.Name == name));
        using (var made = await c.Admin.PostAsync("/admin/certificates", new StringContent("""{"Name":"made","SecurityClearance":"ValidUser"}""", System.Text.Encoding.UTF8, "application/json")))
        {
            Assert.True(made.StatusCode == HttpStatusCode.OK, await made.Content.ReadAsStringAsync());
            Assert.Equal("application/zip", made.Content.Headers.ContentType?.MediaType);
            Assert.Contains("made.zip", made.Content.Headers.ContentDisposition?.ToString());
        }
        Assert.Contains(c.Security.Store.All, d => d.Name == "made");
        await Poll.UntilAsync(() => Task.FromResult(NamedEverywhere("made")), TestCluster.Timeout, "the certificate made through C on every node");
        var thumbprint = a.Security.Store.All.Single(d => d.Name == "made").Thumbprint;
        var edit = $$$"""{"Thumbprint":"{{{thumbprint}}}","Name":"renamed"}""";
        using (var edited = await b.Admin.PostAsync("/admin/certificates/edit", new StringContent(edit, System.Text.Encoding.UTF8, "application/json")))
        {
            Assert.True(edited.StatusCode == HttpStatusCode.Created, await edited.Content.ReadAsStringAsync());
        }
        await Poll.UntilAsync(() => Task.FromResult(NamedEverywhere("renamed") && !nodes.Any(n => n.Security.Store.All.Any(d => d.Name == "made"))), TestCluster.Timeout, "the edit on every node");

        // B restarted (on its URL): replaying the log does not bring back the deleted certificate.
        await using var restarted = await b.RestartAsync("--urls", b.Url);
        Assert.Equal(b.Url, restarted.Url);
        await Poll.UntilAsync(() => Task.FromResult(restarted.Server.Host.Server.Cluster.State.Etag >= a.Server.Host.Server.Cluster.State.Etag), TestCluster.Timeout, "B to catch up after its restart");
        using (var afterRestart = await restarted.Client(reporting, newConnectionPerRequest: true).GetAsync("/certificates/whoami"))
        {
            Assert.NotEqual(HttpStatusCode.OK, afterRestart.StatusCode);
        }
        using (var kept = await restarted.Client(early, newConnectionPerRequest: true).GetAsync("/certificates/whoami"))
        {
            Assert.Equal(HttpStatusCode.OK, kept.StatusCode);
        }
        Assert.Contains(restarted.Security.Store.All, d => d.Name == "renamed");
    }
}
