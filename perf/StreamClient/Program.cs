// Reads every result of one stream (or, as the reference, of one buffered query) as CorpusOrder
// objects through Jackdaw.Client, twice, and prints one JSON line for the second read: results,
// seconds, results/s, this process's CPU during it and its peak working set.
//   StreamClient <url> <database> prefix <id prefix>
//   StreamClient <url> <database> query <rql>
//   StreamClient <url> <database> list <rql>        (the reference: AsyncRawQuery.NoTracking().ToListAsync())
using System.Diagnostics;
using Jackdaw.Client;
using Jackdaw.Client.Tests.Integration;

if (args.Length != 4)
{
    Console.Error.WriteLine("usage: StreamClient <url> <database> prefix|query|list <prefix or rql>");
    return 2;
}

var (url, database, mode, text) = (args[0], args[1], args[2], args[3]);
using var store = new DocumentStore { Urls = [url], Database = database };
store.Conventions.RequestTimeout = TimeSpan.FromMinutes(10);
store.Initialize();

// A first, untimed read compiles the path (a fresh process reads 100,000 orders at about half the
// rate while the JIT tiers up); the second is measured, as an application that streams more than once.
if (await ReadAsync() is null)
{
    Console.Error.WriteLine($"unknown mode {mode}");
    return 2;
}

var process = Process.GetCurrentProcess();
var cpuBefore = process.TotalProcessorTime;
var watch = Stopwatch.StartNew();
var (count, freight) = (await ReadAsync())!.Value;
var seconds = watch.Elapsed.TotalSeconds;
process.Refresh();
var cpu = (process.TotalProcessorTime - cpuBefore).TotalSeconds;
Console.WriteLine($"{{\"results\":{count},\"seconds\":{seconds:0.000},\"perSecond\":{count / seconds:0},\"clientCpuSeconds\":{cpu:0.000},\"clientPeakWorkingSetMB\":{process.PeakWorkingSet64 / 1048576.0:0.0},\"freight\":{freight}}}");
return 0;

async Task<(long Count, decimal Freight)?> ReadAsync()
{
    using var session = store.OpenAsyncSession();
    long count = 0;
    decimal freight = 0;
    switch (mode)
    {
        case "prefix":
            await foreach (var result in session.Advanced.StreamAsync<CorpusOrder>(startsWith: text))
            {
                count++;
                freight += result.Document.Freight;
            }

            break;
        case "query":
            await foreach (var result in session.Advanced.StreamAsync(session.Advanced.AsyncRawQuery<CorpusOrder>(text)))
            {
                count++;
                freight += result.Document.Freight;
            }

            break;
        case "list":
            foreach (var order in await session.Advanced.AsyncRawQuery<CorpusOrder>(text).NoTracking().ToListAsync())
            {
                count++;
                freight += order.Freight;
            }

            break;
        default:
            return null;
    }

    return (count, freight);
}
