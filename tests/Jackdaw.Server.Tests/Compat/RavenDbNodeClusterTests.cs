using System.Diagnostics;
using System.Text.RegularExpressions;
using Jackdaw.Server.Tests.Infrastructure;
using Xunit.Abstractions;

namespace Jackdaw.Server.Tests.Compat;

/// <summary>
/// The compatibility suite's document scenarios with RavenDB's official Node.js client against a
/// cluster of three server processes: every store is given the three URLs (topology updates on,
/// the client's default), every test's database is created with replication factor 3, and node A
/// (the leader, and the node the client prefers) is killed with SIGKILL after the first scenarios
/// passed. The rest must pass through the two nodes left.
/// </summary>
[Collection(RunsAlone.Name)]
public sealed partial class RavenDbNodeClusterTests(ITestOutputHelper output)
{
    /// <summary>
    /// The scenarios that store, load, query, patch and delete documents and make their ids, and
    /// their attachments (replication carries the bytes, so a node that takes over serves them).
    /// </summary>
    private const string DocumentScenarios =
        "tests/sessions.test.mjs tests/patch.test.mjs tests/query.test.mjs tests/lazy.test.mjs tests/entity-names.test.mjs tests/identities.test.mjs tests/attachments.test.mjs";

    /// <summary>
    /// Node A dies as the sixth scenario starts (the files run in name order: attachments first).
    /// Not during the fifth: the client sends its 5 MB attachment from a stream, which it cannot
    /// rewind, so a retry on the next node sends an empty body (RavenDB's server would store that too).
    /// </summary>
    private const int PassesBeforeTheKill = 5;

    [Fact]
    public async Task TheOfficialNodeClientCompletesItsDocumentScenariosOnThreeNodesWithOneKilledMidRun()
    {
        var clock = Stopwatch.StartNew();
        var suite = RavenDbNodeClientTests.SuiteFolder();
        await RavenDbNodeClientTests.EnsureInstalledAsync(suite);
        await using var cluster = await TestCluster.StartAsync(3);
        var victim = cluster.Nodes[0];
        var passes = 0;
        var passesAfterTheKill = -1;
        TimeSpan? killedAt = null;

        var (exitCode, text) = await RavenDbNodeClientTests.RunAsync("node", "--test --test-concurrency=1 --test-reporter=tap " + DocumentScenarios, suite, TimeSpan.FromMinutes(3),
            onLine: line =>
            {
                if (!PassedScenario().IsMatch(line))
                {
                    return;
                }
                passes++;
                if (killedAt is not null)
                {
                    passesAfterTheKill++;
                }
                if (passes == PassesBeforeTheKill)
                {
                    victim.Kill();
                    killedAt = clock.Elapsed;
                    passesAfterTheKill = 0;
                }
            },
            ("JACKDAW_CLUSTER_URLS", string.Join(',', cluster.Nodes.Select(n => n.Url))),
            ("JACKDAW_REPLICATION_FACTOR", "3"));
        output.WriteLine(text);
        output.WriteLine($"node A killed at {killedAt?.TotalSeconds:0.0} s after {PassesBeforeTheKill} scenarios; {passesAfterTheKill} passed after; {clock.Elapsed.TotalSeconds:0} s in all");

        Assert.True(exitCode == 0, "The RavenDB Node.js client's document scenarios failed on the cluster:\n" + text);
        Assert.Contains("# fail 0", text, StringComparison.Ordinal);
        Assert.NotNull(killedAt);
        Assert.True(passesAfterTheKill >= 8, $"only {passesAfterTheKill} scenarios ran after node A was killed");
    }

    /// <summary>A TAP line of one passed scenario (a test, not a whole file: node nests a file's tests under it).</summary>
    [GeneratedRegex(@"^\s*ok \d+ - (?!.*\.mjs$)")]
    private static partial Regex PassedScenario();
}
