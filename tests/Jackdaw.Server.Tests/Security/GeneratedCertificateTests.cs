using System.IO.Compression;
using System.Net;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using System.Text;
using Jackdaw.Server.Security;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Security;

/// <summary>
/// <c>POST /admin/certificates</c>: a client certificate the server makes and signs, handed out in
/// RavenDB's zip (<c>{name}.pfx</c>, <c>.crt</c>, <c>.key</c>), whose PFX and PEM each work as a
/// client certificate against the server.
/// </summary>
public sealed class GeneratedCertificateTests : IAsyncLifetime
{
    private SecuredServer _server = null!;

    public async Task InitializeAsync() => _server = await SecuredServer.StartAsync();

    public async Task DisposeAsync() => await _server.DisposeAsync();

    private async Task<Dictionary<string, byte[]>> CreateAsync(string body, string fileName)
    {
        using var response = await _server.Admin.PostAsync("/admin/certificates", Api.Json(body));
        Assert.True(response.StatusCode == HttpStatusCode.OK, await response.Content.ReadAsStringAsync());
        Assert.Equal("application/zip", response.Content.Headers.ContentType?.MediaType);
        Assert.Equal($"attachment; filename={Uri.EscapeDataString(fileName)}.zip", response.Content.Headers.ContentDisposition?.ToString());
        using var zip = new ZipArchive(new MemoryStream(await response.Content.ReadAsByteArrayAsync()));
        var entries = new Dictionary<string, byte[]>();
        foreach (var entry in zip.Entries)
        {
            Assert.Equal(0b110_000_000, (entry.ExternalAttributes >> 16) & 0x1FF);
            using var stream = entry.Open();
            using var buffer = new MemoryStream();
            stream.CopyTo(buffer);
            entries.Add(entry.FullName, buffer.ToArray());
        }
        return entries;
    }

    /// <summary>Through PKCS#12 and back, as <see cref="TestCertificates"/> does: usable by SslStream.</summary>
    private static X509Certificate2 Usable(X509Certificate2 certificate) =>
        X509CertificateLoader.LoadPkcs12(certificate.Export(X509ContentType.Pfx), null, X509KeyStorageFlags.EphemeralKeySet);

    private async Task<string> WhoAmIAsync(X509Certificate2 certificate)
    {
        using var response = await _server.Client(certificate).GetAsync("/certificates/whoami");
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        return (await Api.JsonAsync(response)).GetProperty("Name").GetString()!;
    }

    /// <summary>OpenSSL's traditional encrypted PEM, read back independently: EVP_BytesToKey (MD5, one round, salt = IV) and 3DES-CBC.</summary>
    private static RSA DecryptTraditionalPem(string pem, string password)
    {
        var lines = pem.Split('\n');
        Assert.Equal("-----BEGIN RSA PRIVATE KEY-----", lines[0]);
        Assert.Equal("Proc-Type: 4,ENCRYPTED", lines[1]);
        Assert.StartsWith("DEK-Info: DES-EDE3-CBC,", lines[2], StringComparison.Ordinal);
        Assert.Equal("", lines[3]);
        var iv = Convert.FromHexString(lines[2]["DEK-Info: DES-EDE3-CBC,".Length..]);
        var encrypted = Convert.FromBase64String(string.Concat(lines.Skip(4).TakeWhile(l => !l.StartsWith("-----END", StringComparison.Ordinal))));
        var secret = Encoding.UTF8.GetBytes(password);
        var d1 = MD5.HashData([.. secret, .. iv]);
        var d2 = MD5.HashData([.. d1, .. secret, .. iv]);
        using var cipher = TripleDES.Create();
        cipher.Key = [.. d1, .. d2.AsSpan(0, 8)];
        var rsa = RSA.Create();
        rsa.ImportRSAPrivateKey(cipher.DecryptCbc(encrypted, iv), out _);
        return rsa;
    }

    [Fact]
    public async Task TheZipsPfxAndPemWorkAsClientCertificatesWithItsPassword()
    {
        using (await _server.Admin.PutAsync("/admin/databases?name=shop", null))
        {
        }
        var files = await CreateAsync("""{"Name":"Report Writer","SecurityClearance":"ValidUser","Permissions":{"shop":"ReadWrite"},"Password":"pa55"}""", "Report Writer");
        Assert.Equal(["Report Writer.crt", "Report Writer.key", "Report Writer.pfx"], files.Keys.Order(StringComparer.Ordinal));

        // The PFX: the certificate with its key, and the server's certificate without its key.
        var pfx = X509CertificateLoader.LoadPkcs12Collection(files["Report Writer.pfx"], "pa55", X509KeyStorageFlags.EphemeralKeySet);
        Assert.Throws<CryptographicException>(() => X509CertificateLoader.LoadPkcs12Collection(files["Report Writer.pfx"], null));
        Assert.Equal(2, pfx.Count);
        var client = Assert.Single(pfx, c => c.HasPrivateKey);
        var issuer = Assert.Single(pfx, c => !c.HasPrivateKey);
        Assert.Equal(_server.ServerCertificate.Thumbprint, issuer.Thumbprint);
        Assert.Equal("CN=Report Writer", client.Subject);
        Assert.Equal(_server.ServerCertificate.Subject, client.Issuer);
        Assert.Equal(4096, client.GetRSAPublicKey()!.KeySize);
        Assert.Equal("1.3.6.1.5.5.7.3.2", Assert.Single(client.Extensions.OfType<X509EnhancedKeyUsageExtension>().Single().EnhancedKeyUsages.Cast<Oid>()).Value);
        Assert.InRange(client.NotAfter.ToUniversalTime(), DateTime.UtcNow.AddYears(5).AddDays(-2), DateTime.UtcNow.AddYears(5));
        Assert.Equal(SecurityClearance.ValidUser, _server.Security.Store.Get(client.Thumbprint)!.Clearance);
        Assert.Equal("Report Writer", await WhoAmIAsync(Usable(client)));

        // The PEM: the same certificate, and its PKCS#1 key encrypted with the password.
        var crt = Encoding.ASCII.GetString(files["Report Writer.crt"]);
        using var fromPem = X509Certificate2.CreateFromPem(crt);
        Assert.Equal(client.Thumbprint, fromPem.Thumbprint);
        using var key = DecryptTraditionalPem(Encoding.ASCII.GetString(files["Report Writer.key"]), "pa55");
        using var withKey = fromPem.CopyWithPrivateKey(key);
        var pemClient = _server.Client(Usable(withKey));
        using var write = await pemClient.PutAsync("/databases/shop/docs?id=reports/1", Api.Json("{}"));
        Assert.Equal(HttpStatusCode.Created, write.StatusCode);
    }

    [Fact]
    public async Task WithoutAPasswordTheKeyIsPlainPkcs1AndTheNameIsAFileName()
    {
        var files = await CreateAsync("""{"Name":"ops/../night shift","SecurityClearance":"Operator","Permissions":{},"NotAfter":"2030-01-31"}""", "ops/../night shift");
        Assert.Equal(["ops_.._night shift.crt", "ops_.._night shift.key", "ops_.._night shift.pfx"], files.Keys.Order(StringComparer.Ordinal));
        var key = Encoding.ASCII.GetString(files["ops_.._night shift.key"]);
        Assert.StartsWith("-----BEGIN RSA PRIVATE KEY-----\n", key, StringComparison.Ordinal);
        using var certificate = X509Certificate2.CreateFromPem(Encoding.ASCII.GetString(files["ops_.._night shift.crt"]), key);
        Assert.Equal(new DateTime(2030, 1, 31, 0, 0, 0, DateTimeKind.Utc), certificate.NotAfter.ToUniversalTime());
        var pfx = X509CertificateLoader.LoadPkcs12(files["ops_.._night shift.pfx"], null, X509KeyStorageFlags.EphemeralKeySet);
        Assert.Equal(certificate.Thumbprint, pfx.Thumbprint);
        Assert.Equal("ops/../night shift", await WhoAmIAsync(Usable(certificate)));
        using var stats = await _server.Client(pfx).GetAsync("/admin/stats");
        Assert.Equal(HttpStatusCode.OK, stats.StatusCode);
    }

    [Fact]
    public async Task AnEcdsaServerCertificateSignsTooAndBadBodiesMakeNothing()
    {
        using var ecdsa = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var request = new CertificateRequest("CN=ecdsa-server", ecdsa, HashAlgorithmName.SHA256);
        var san = new SubjectAlternativeNameBuilder();
        san.AddIpAddress(IPAddress.Loopback);
        request.CertificateExtensions.Add(san.Build());
        using var made = request.CreateSelfSigned(DateTimeOffset.UtcNow.AddDays(-1), DateTimeOffset.UtcNow.AddYears(1));
        var serverCertificate = X509CertificateLoader.LoadPkcs12(made.Export(X509ContentType.Pfx), null, X509KeyStorageFlags.EphemeralKeySet | X509KeyStorageFlags.Exportable);
        await using var server = await SecuredServer.StartAsync(serverCertificate, pem: false);
        using var response = await server.Admin.PostAsync("/admin/certificates", Api.Json("""{"Name":"signed by ecdsa","SecurityClearance":"Operator","Permissions":{}}"""));
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        using var zip = new ZipArchive(new MemoryStream(await response.Content.ReadAsByteArrayAsync()));
        using var pfx = zip.GetEntry("signed by ecdsa.pfx")!.Open();
        using var buffer = new MemoryStream();
        pfx.CopyTo(buffer);
        var client = X509CertificateLoader.LoadPkcs12(buffer.ToArray(), null, X509KeyStorageFlags.EphemeralKeySet);
        Assert.Equal("CN=ecdsa-server", client.Issuer);
        using var stats = await server.Client(client).GetAsync("/admin/stats");
        Assert.Equal(HttpStatusCode.OK, stats.StatusCode);

        using var noName = await server.Admin.PostAsync("/admin/certificates", Api.Json("""{"SecurityClearance":"Operator"}"""));
        Assert.Contains("\"Name\" is required", await Api.AssertErrorAsync(noName, HttpStatusCode.BadRequest, "BadRequestException"), StringComparison.Ordinal);
        using var past = await server.Admin.PostAsync("/admin/certificates", Api.Json("""{"Name":"late","NotAfter":"2001-01-01"}"""));
        Assert.Contains("must expire in the future", await Api.AssertErrorAsync(past, HttpStatusCode.BadRequest, "BadRequestException"), StringComparison.Ordinal);
        Assert.Single(server.Security.Store.All);
    }
}
