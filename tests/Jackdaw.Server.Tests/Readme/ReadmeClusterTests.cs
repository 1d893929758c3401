using System.Net;
using System.Net.Http.Json;
using System.Net.Sockets;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Readme;

/// <summary>
/// README's "A cluster": its three <c>dotnet run</c> commands, run with the options as written
/// (the built server instead of <c>dotnet run</c>, free ports for 8080-8082 and temp folders for the
/// data), form one cluster of three members.
/// </summary>
[Collection(RunsAlone.Name)]
public sealed class ReadmeClusterTests
{
    private const string Section = "A cluster";

    [Fact]
    public async Task TheThreeCommandsFormOneCluster()
    {
        var block = Assert.Single(ReadmeDocument.Blocks(), b => b.Language == "sh" && b.Section == Section);
        var commands = ReadmeDocument.Commands(block).Select(c => c.Text).ToList();
        Assert.Equal(3, commands.Count);
        Assert.All(commands, c => Assert.StartsWith("dotnet run --project server -c Release -- ", c));

        using var data = new TempFolder("jackdaw-readme-cluster");
        var ports = new Dictionary<string, int>();
        foreach (var port in new[] { "8080", "8081", "8082" })
        {
            ports[port] = FreePort();
        }
        var nodes = new List<ServerProcess>();
        try
        {
            foreach (var command in commands)
            {
                var arguments = command["dotnet run --project server -c Release -- ".Length..];
                foreach (var (written, port) in ports)
                {
                    arguments = arguments.Replace($"127.0.0.1:{written}", $"127.0.0.1:{port}", StringComparison.Ordinal);
                }
                arguments = arguments.Replace("./node-", data.Path + "/node-", StringComparison.Ordinal);
                var node = ServerProcess.Start(arguments);
                nodes.Add(node);
                await node.WaitForAddressAsync(TimeSpan.FromSeconds(60));
            }
            using var http = new HttpClient();
            var first = $"http://127.0.0.1:{ports["8080"]}";
            JsonElement topology = default;
            try
            {
                await Poll.UntilAsync(async () =>
                {
                    topology = await http.GetFromJsonAsync<JsonElement>($"{first}/cluster/topology");
                    return topology.GetProperty("Topology").GetProperty("Members").EnumerateObject().Count() == 3;
                }, TimeSpan.FromSeconds(90), "three members");
            }
            catch (TimeoutException e)
            {
                throw new TimeoutException($"{e.Message} Last topology: {topology}\n\n{string.Join("\n\n", nodes.Select(n => n.Output))}", e);
            }
            Assert.Equal("A", topology.GetProperty("NodeTag").GetString());
            Assert.Equal(first, topology.GetProperty("Topology").GetProperty("Members").GetProperty("A").GetString());
            Assert.Equal("A", topology.GetProperty("Leader").GetString());
        }
        finally
        {
            foreach (var node in nodes)
            {
                node.Dispose();
            }
        }
    }

    private static int FreePort()
    {
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        return ((IPEndPoint)listener.LocalEndpoint).Port;
    }
}
