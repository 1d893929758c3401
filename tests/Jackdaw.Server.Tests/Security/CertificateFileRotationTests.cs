using System.Diagnostics;
using System.Net;
using System.Security.Cryptography.X509Certificates;
using Jackdaw.Server.Security;
using Jackdaw.Server.Tests.Infrastructure;
using Xunit.Abstractions;

namespace Jackdaw.Server.Tests.Security;

/// <summary>
/// The server certificate's files replaced while the server runs: new handshakes present the new
/// certificate as soon as the watcher has loaded it, a connection opened before keeps its
/// certificate (and is served), and the old certificate is disposed when that connection closes.
/// A file caught half-written, or a PEM certificate whose key has not been replaced yet, is
/// retried and never served.
/// </summary>
public sealed class CertificateFileRotationTests(ITestOutputHelper output)
{
    /// <summary>Generous: the watcher loads a change within about a second; this bounds a hang on a loaded machine.</summary>
    private static readonly TimeSpan Deadline = TimeSpan.FromSeconds(60);

    [Fact]
    public async Task AnAtomicallyReplacedPfxIsPresentedByNewHandshakesWhileAnOpenConnectionKeepsTheOld()
    {
        await using var server = await SecuredServer.StartAsync();
        using var caller = Caller(server);
        var first = server.Security.Certificate.CurrentEntry;
        using var keepAlive = new TlsObservingClient(server.Url, caller, keepAlive: true);
        await AssertServedAsync(keepAlive);
        Assert.Equal(first.Thumbprint, keepAlive.LastThumbprint);

        using var renewed = TestCertificates.Server("renewed");
        var renamed = Stopwatch.StartNew();
        Install(server, renewed);
        using var fresh = new TlsObservingClient(server.Url, caller, keepAlive: false);
        await AssertPresentedAsync(fresh, renewed);
        output.WriteLine($"New handshakes presented the renewed certificate {renamed.ElapsedMilliseconds} ms after the new file was put in place.");

        // The connection opened before: the same connection, served, on the old certificate,
        // which stays alive for it.
        await AssertServedAsync(keepAlive);
        Assert.Equal(1, keepAlive.Connects);
        Assert.Equal(first.Thumbprint, keepAlive.Handshakes.Single().Thumbprint);
        Assert.False(first.IsDisposed);
        Assert.NotEqual(IntPtr.Zero, first.Certificate.Handle);

        keepAlive.Dispose();
        await AssertDisposedAsync(first);
        Assert.Equal(1, server.Security.Certificate.Replacements);
    }

    [Fact]
    public async Task APfxRewrittenInPlaceInTwoHalvesIsRetriedUntilWholeAndNeverLoadedHalf()
    {
        await using var server = await SecuredServer.StartAsync();
        using var caller = Caller(server);
        var first = server.Security.Certificate.CurrentEntry;
        var watcher = server.Security.Watcher;
        using var fresh = new TlsObservingClient(server.Url, caller, keepAlive: false);
        using var renewed = TestCertificates.Server("renewed");
        var pfx = renewed.Export(X509ContentType.Pfx, "secret");

        await using (var file = new FileStream(server.CertificatePath, FileMode.Truncate, FileAccess.Write, FileShare.ReadWrite))
        {
            await file.WriteAsync(pfx.AsMemory(0, pfx.Length / 2));
            await file.FlushAsync();
            // Two failed loads after the flush: the second started after the first ended, so it
            // read the half-written file (the first may have read the file just truncated).
            var failed = watcher.FailedLoads;
            await Poll.UntilAsync(() => Task.FromResult(watcher.FailedLoads >= failed + 2), Deadline, "the watcher to try the half-written file");
            await AssertServedAsync(fresh);
            Assert.Equal(first.Thumbprint, fresh.LastThumbprint);
            Assert.Equal(0, server.Security.Certificate.Replacements);

            await file.WriteAsync(pfx.AsMemory(pfx.Length / 2));
        }
        await AssertPresentedAsync(fresh, renewed);
        Assert.Equal(1, server.Security.Certificate.Replacements);
        await AssertDisposedAsync(first);
    }

    [Fact]
    public async Task APemCertificateReplacedBeforeItsKeyIsServedOnlyOnceTheKeyMatches()
    {
        using var original = TestCertificates.Server();
        await using var server = await SecuredServer.StartAsync(original, pem: true);
        using var caller = Caller(server);
        var first = server.Security.Certificate.CurrentEntry;
        var watcher = server.Security.Watcher;
        using var fresh = new TlsObservingClient(server.Url, caller, keepAlive: false);
        using var renewed = TestCertificates.Server("renewed");
        var (stagedCertificate, stagedKey) = TestCertificates.WritePem(renewed, server.CertificateFolder, "staged");

        var failed = watcher.FailedLoads;
        File.Move(stagedCertificate, server.CertificatePath, overwrite: true);
        // The new certificate with the old key: a pair that does not match, tried and refused.
        await Poll.UntilAsync(() => Task.FromResult(watcher.FailedLoads > failed), Deadline, "the watcher to try the new certificate with the old key");
        await AssertServedAsync(fresh);
        Assert.Equal(first.Thumbprint, fresh.LastThumbprint);
        Assert.Equal(0, server.Security.Certificate.Replacements);

        File.Move(stagedKey, server.KeyPath!, overwrite: true);
        await AssertPresentedAsync(fresh, renewed);
        Assert.Equal(1, server.Security.Certificate.Replacements);
        await AssertDisposedAsync(first);
    }

    [Fact]
    public async Task AReloadOfOlderContentNeverReplacesTheNewerOne()
    {
        await using var server = await SecuredServer.StartAsync();
        var watcher = server.Security.Watcher;
        var holder = server.Security.Certificate;
        using var older = TestCertificates.Server("older");
        using var newer = TestCertificates.Server("newer");
        using var resume = new ManualResetEventSlim();
        var pausedWithOlder = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var newerInstalled = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        watcher.Loaded = loaded =>
        {
            if (loaded.Thumbprint == older.Thumbprint)
            {
                pausedWithOlder.TrySetResult();
                resume.Wait(Deadline);
            }
        };
        holder.Replaced += installed =>
        {
            if (installed.Thumbprint == newer.Thumbprint)
            {
                newerInstalled.TrySetResult();
            }
        };

        // A reload has read the older file and is held before it replaces the certificate; the
        // newer file arrives meanwhile and its own reload begins.
        Install(server, older);
        await pausedWithOlder.Task.WaitAsync(Deadline);
        var reloads = watcher.Reloads;
        Install(server, newer);
        await Poll.UntilAsync(() => Task.FromResult(watcher.Reloads > reloads), Deadline, "the watcher to reload the newer file");
        // Were reloads not one at a time, the newer one would install its certificate now, under
        // the held one; 2 s is its chance to (one at a time, it waits for the held reload instead).
        await Task.WhenAny(newerInstalled.Task, Task.Delay(TimeSpan.FromSeconds(2)));
        resume.Set();

        await Poll.UntilAsync(() => Task.FromResult(holder.Replacements >= 2), Deadline, "both reloads to replace the certificate");
        Assert.Equal(newer.Thumbprint, holder.Thumbprint);
    }

    [Fact]
    public async Task AReloadThatFailsUnexpectedlyIsLoggedAndTheServerKeepsServing()
    {
        await using var server = await SecuredServer.StartAsync();
        var watcher = server.Security.Watcher;
        var holder = server.Security.Certificate;
        var first = holder.Thumbprint;
        using var refused = TestCertificates.Server("refused");
        // An exception that is not a load error (the TLS context refusing the certificate, say):
        // thrown from the watcher's timer it would end the process.
        watcher.Loaded = loaded =>
        {
            if (loaded.Thumbprint == refused.Thumbprint)
            {
                throw new InvalidOperationException("refused by the test");
            }
        };

        Install(server, refused);
        await Poll.UntilAsync(
            () => Task.FromResult(server.Server.Logs.Records.Any(r => r.Level == Microsoft.Extensions.Logging.LogLevel.Error && r.Exception?.Message == "refused by the test")),
            Deadline,
            "the failed reload to be logged");
        Assert.Equal(first, holder.Thumbprint);
        using var response = await server.Admin.GetAsync("/admin/stats");
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
    }

    /// <summary>Puts <paramref name="certificate"/> in the server's PFX file at once (a rename).</summary>
    private static void Install(SecuredServer server, X509Certificate2 certificate)
    {
        var staged = TestCertificates.WritePfx(certificate, Path.Combine(server.CertificateFolder, "staged.pfx"), "secret");
        File.Move(staged, server.CertificatePath, overwrite: true);
    }

    /// <summary>A registered Operator: the server's own first certificate stops being ClusterAdmin once replaced.</summary>
    private static X509Certificate2 Caller(SecuredServer server)
    {
        var caller = TestCertificates.Client("rotation-caller");
        server.Register(caller, SecurityClearance.Operator);
        return caller;
    }

    private static async Task AssertServedAsync(TlsObservingClient client)
    {
        using var response = await client.Http.GetAsync("/admin/stats");
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
    }

    /// <summary>Waits until a new handshake of <paramref name="fresh"/> presents <paramref name="expected"/>.</summary>
    private static Task AssertPresentedAsync(TlsObservingClient fresh, X509Certificate2 expected) =>
        Poll.UntilAsync(
            async () =>
            {
                await AssertServedAsync(fresh);
                return fresh.LastThumbprint == expected.Thumbprint;
            },
            Deadline,
            $"new handshakes to present {expected.Subject}");

    /// <summary>Waits until the server has seen the last connection of <paramref name="retired"/> close: then it is disposed, key and all.</summary>
    private static async Task AssertDisposedAsync(ServerCertificate retired)
    {
        await Poll.UntilAsync(() => Task.FromResult(retired.IsDisposed), Deadline, "the retired certificate's last connection to close");
        Assert.Equal(IntPtr.Zero, retired.Certificate.Handle);
    }
}
