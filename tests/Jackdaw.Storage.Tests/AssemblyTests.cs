namespace Jackdaw.Storage.Tests;

public class AssemblyTests
{
    [Fact]
    public void AssemblyNameIsJackdawStorage() => Assert.Equal("Jackdaw.Storage", typeof(Jackdaw.Storage.StorageAssembly).Assembly.GetName().Name);
}
