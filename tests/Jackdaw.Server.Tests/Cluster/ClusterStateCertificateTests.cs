using System.Text;
using Jackdaw.Server.Cluster;
using Jackdaw.Server.Security;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Cluster;

public sealed class ClusterStateCertificateTests
{
    private static ClusterState Apply(ClusterState state, long index, ClusterCommand command)
    {
        var (after, refused) = state.Apply(command, index);
        Assert.Null(refused);
        return after;
    }

    private static CertificateDefinition Definition(string name, SecurityClearance clearance = SecurityClearance.ValidUser)
    {
        using var certificate = TestCertificates.Client(name);
        return CertificateDefinition.Of(certificate, name, clearance, new Dictionary<string, DatabaseAccess> { ["Orders"] = DatabaseAccess.ReadWrite });
    }

    private static ClusterCommand Put(string id, params CertificateDefinition[] definitions) =>
        new(id, ClusterCommandKind.PutCertificates) { Certificates = [.. definitions.Select(ClusterCertificate.Of)] };

    [Fact]
    public void CertificateCommandsPutReplaceAndDeleteARegistrationByThumbprint()
    {
        var reporting = Definition("reporting");
        var state = Apply(ClusterState.Empty, 1, Put("p1", reporting));
        var registered = state.Certificates[reporting.Thumbprint.ToLowerInvariant()].Read();
        Assert.Equal((reporting.Name, reporting.Clearance, reporting.Thumbprint), (registered.Name, registered.Clearance, registered.Thumbprint));
        Assert.Equal(reporting.RawData, registered.RawData);
        Assert.Equal(DatabaseAccess.ReadWrite, registered.AccessTo("orders"));
        Assert.Equal(1, state.Etag);

        state = Apply(state, 2, Put("p2", reporting with { Name = "reports", Clearance = SecurityClearance.Operator }));
        Assert.Equal(("reports", SecurityClearance.Operator), (state.Certificates[reporting.Thumbprint].Read().Name, state.Certificates[reporting.Thumbprint].Read().Clearance));
        Assert.Single(state.Certificates);

        state = Apply(state, 3, new ClusterCommand("d1", ClusterCommandKind.DeleteCertificate) { Thumbprint = reporting.Thumbprint.ToLowerInvariant() });
        Assert.Empty(state.Certificates);
        Assert.Equal(3, state.Etag);
        var (same, refused) = state.Apply(new ClusterCommand("d2", ClusterCommandKind.DeleteCertificate) { Thumbprint = reporting.Thumbprint }, 4);
        Assert.NotNull(refused);
        Assert.Equal(3, same.Etag);
    }

    [Fact]
    public void ACertificateRegistrationHoldsThePublicPartOnly()
    {
        using var certificate = TestCertificates.Client("with-key");
        Assert.True(certificate.HasPrivateKey);
        var registration = ClusterCertificate.Of(CertificateDefinition.Of(certificate, "with-key", SecurityClearance.ValidUser, null));
        using var read = System.Security.Cryptography.X509Certificates.X509CertificateLoader.LoadCertificate(registration.Read().RawData);
        Assert.False(read.HasPrivateKey);
        Assert.DoesNotContain("PRIVATE", registration.Definition, StringComparison.OrdinalIgnoreCase);
    }

    [Fact]
    public void ACertificateCommandRetriedWithItsIdIsAppliedOnce()
    {
        var reporting = Definition("reporting");
        var put = Put("p1", reporting);
        var state = Apply(ClusterState.Empty, 1, put);
        state = Apply(state, 2, new ClusterCommand("d1", ClusterCommandKind.DeleteCertificate) { Thumbprint = reporting.Thumbprint });
        // The put again (a retry after a lost answer): the delete that followed it stands.
        state = Apply(state, 3, put);
        Assert.Empty(state.Certificates);
        Assert.Equal(2, state.Etag);
    }

    [Fact]
    public void ASnapshotHoldsTheRegisteredCertificates()
    {
        var reporting = Definition("reporting");
        var admin = Definition("admin", SecurityClearance.Operator);
        var state = Apply(ClusterState.Empty, 1, Put("p1", reporting, admin));
        var restored = ClusterState.FromJson(state.ToJson());
        Assert.Equal(state.Certificates.Values, restored.Certificates.Values);
        Assert.True(restored.WasApplied("p1"));
        // Thumbprints are still compared ignoring case once restored.
        restored = Apply(restored, 2, new ClusterCommand("d1", ClusterCommandKind.DeleteCertificate) { Thumbprint = admin.Thumbprint.ToLowerInvariant() });
        Assert.Equal([reporting.Thumbprint], restored.Certificates.Keys);
        // A state without applied ids (what a node keeps as acted) keeps them too.
        Assert.Equal(restored.Certificates, restored.WithoutAppliedIds().Certificates);
    }

    [Fact]
    public void ASnapshotWrittenBeforeCertificatesWereInTheStateLoadsWithNone()
    {
        var old = """
            {"Members":{"A":"http://127.0.0.1:1"},
             "Databases":[{"Name":"Orders","Nodes":["A"],"TopologyEtag":2,"Settings":{}}],
             "AppliedIds":["m1","db"],"Etag":2}
            """;
        var state = ClusterState.FromJson(Encoding.UTF8.GetBytes(old));
        Assert.Empty(state.Certificates);
        state = Apply(state, 3, Put("p1", Definition("reporting")));
        Assert.Single(state.Certificates);
    }
}
