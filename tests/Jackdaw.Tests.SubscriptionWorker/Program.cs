using Jackdaw.Client;
using Jackdaw.Client.Subscriptions;

// dotnet Jackdaw.Tests.SubscriptionWorker.dll <server url[,url...]> <database> <subscription> <received file> [work ms]
//
// Several URLs (comma-separated): the nodes of a cluster, for the client's failover.
// Runs the .NET client's subscription worker (TakeOver, batches of 256, reconnecting every 100 ms)
// and appends the id of every document it receives to <received file>, one per line, written to the
// operating system before the batch is acknowledged: a SIGKILL loses nothing that was acknowledged.
// Then it "works" on the batch for [work ms] (default 0) before acknowledging it, so that a kill
// often lands between a batch's receipt and its acknowledgement.
if (args.Length is not (4 or 5))
{
    Console.Error.WriteLine("usage: Jackdaw.Tests.SubscriptionWorker <server url[,url...]> <database> <subscription> <received file> [work ms]");
    return 2;
}
var (url, database, subscription, file) = (args[0], args[1], args[2], args[3]);
var work = args.Length == 5 ? int.Parse(args[4], System.Globalization.CultureInfo.InvariantCulture) : 0;
using var store = new DocumentStore { Urls = url.Split(','), Database = database }.Initialize();
await using var received = new FileStream(file, FileMode.Append, FileAccess.Write, FileShare.ReadWrite);
await using var worker = store.Subscriptions.GetSubscriptionWorker<Order>(new SubscriptionWorkerOptions(subscription)
{
    Strategy = SubscriptionOpeningStrategy.TakeOver,
    MaxDocsPerBatch = 256,
    TimeToWaitBeforeConnectionRetry = TimeSpan.FromMilliseconds(100),
    MaxErroneousPeriod = TimeSpan.FromMinutes(10),
});
worker.OnEstablishedSubscriptionConnection += () => Console.WriteLine("connected");
await worker.Run(async batch =>
{
    // A leading newline ends a line a killed worker left half written.
    var lines = new System.Text.StringBuilder("\n");
    foreach (var item in batch.Items)
    {
        lines.Append(item.Id).Append('\n');
    }
    var bytes = System.Text.Encoding.UTF8.GetBytes(lines.ToString());
    received.Write(bytes);
    received.Flush();
    if (work > 0)
    {
        await Task.Delay(work);
    }
});
return 0;

internal sealed class Order
{
    public double Freight { get; set; }
}
