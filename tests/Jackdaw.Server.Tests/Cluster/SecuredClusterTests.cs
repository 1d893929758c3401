using System.Net;
using Jackdaw.Server.Security;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Cluster;

/// <summary>
/// Two secured servers that share their certificate (a cluster certificate, as RavenDB's nodes
/// usually do) form a cluster over HTTPS: Raft's requests, the leader's checks and the requests
/// passed on to the leader (a subscription's command too) present it; Raft's path refuses other certificates.
/// </summary>
public sealed class SecuredClusterTests
{
    [Fact]
    public async Task SecuredNodesFormAClusterAndRaftsPathRefusesOtherCertificates()
    {
        var certificate = TestCertificates.Server();
        await using var a = await SecuredServer.StartAsync(certificate, pem: false);
        await using var b = await SecuredServer.StartAsync(certificate, pem: false, "--Cluster:Passive=true");
        using (var added = await a.Admin.PutAsync($"/admin/cluster/node?url={Uri.EscapeDataString(b.Url)}&tag=B", null))
            Assert.True(added.StatusCode == HttpStatusCode.OK, await added.Content.ReadAsStringAsync());
        await Poll.UntilAsync(() => Task.FromResult(b.Server.Host.Server.Cluster.NodeTag == "B"), TestCluster.Timeout, "B to learn its tag");

        // Sent to B, which does not lead: passed on to A with B's certificate.
        using (var created = await b.Admin.PutAsync("/admin/databases?name=Orders&replicationFactor=2", null))
            Assert.True(created.StatusCode == HttpStatusCode.Created, await created.Content.ReadAsStringAsync());
        Assert.Contains("Orders", b.Server.Host.Server.Databases.Names);
        await Poll.UntilAsync(() => Task.FromResult(a.Server.Host.Server.Databases.Names.Contains("Orders")), TestCluster.Timeout, "Orders on A");

        // A subscription created on B: its command goes to the leader with B's certificate.
        using (var subscription = await b.Admin.PutAsync("/databases/Orders/subscriptions", new StringContent("""{"Name":"All","Query":"from Orders"}""", System.Text.Encoding.UTF8, "application/json")))
            Assert.True(subscription.StatusCode == HttpStatusCode.Created, await subscription.Content.ReadAsStringAsync());
        await Poll.UntilAsync(() => Task.FromResult(a.Server.Host.Server.Cluster.State.Subscriptions.Of("Orders").ContainsKey("All")), TestCluster.Timeout, "the subscription in A's state");

        var operatorCertificate = TestCertificates.Client("operator");
        a.Register(operatorCertificate, SecurityClearance.Operator);
        using (var command = await a.Client(operatorCertificate).PostAsync("/admin/cluster/subscription-commands", new StringContent("{}")))
            Assert.Equal(HttpStatusCode.Forbidden, command.StatusCode);
        using (var refused = await a.Client(operatorCertificate).PostAsync("/cluster-consensus/raft", new ByteArrayContent([])))
            Assert.Equal(HttpStatusCode.Forbidden, refused.StatusCode);
        using (var anonymous = await a.Client(null).PostAsync("/cluster-consensus/raft", new ByteArrayContent([])))
            Assert.Equal(HttpStatusCode.Unauthorized, anonymous.StatusCode);
    }
}
