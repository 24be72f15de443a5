import { readFileSync } from 'node:fs';
import {
  type Abi,
  type Account,
  type Address,
  concatHex,
  encodeDeployData,
  getContractAddress,
  type Hex,
  keccak256,
  type PublicClient,
  parseAbi,
  stringToHex,
  type Transport,
  testActions,
  type Chain as ViemChain,
  type WalletClient,
} from 'viem';
import type { TokenInfo } from './networks.ts';

// The project's own EIP-3009 token (contracts/TestUSDC.sol) and the reads every USDC-style
// token answers. The compiled artifact is checked in (npm run build:contracts), so start-up
// needs no compiler.

/** The calls Tollbook makes on any EIP-3009 token; a test checks them against the compiled ABI. */
export const EIP3009_TOKEN_ABI = parseAbi([
  'function name() view returns (string)',
  'function symbol() view returns (string)',
  'function version() view returns (string)',
  'function decimals() view returns (uint8)',
  'function balanceOf(address account) view returns (uint256)',
  'function totalSupply() view returns (uint256)',
  'function eip712Domain() view returns (bytes1 fields, string name, string version, uint256 chainId, address verifyingContract, bytes32 salt, uint256[] extensions)',
  'function authorizationState(address authorizer, bytes32 nonce) view returns (bool)',
  'function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)',
  'function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, bytes signature)',
  'function transfer(address to, uint256 value) returns (bool)',
  'event Transfer(address indexed from, address indexed to, uint256 value)',
  'event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)',
]);

/**
 * EIP-3009's typed data for transferWithAuthorization, as a payer signs it (tests, the benchmark
 * and development tools sign with it; verification is the x402 facilitator's, never ours).
 */
export const TRANSFER_WITH_AUTHORIZATION_TYPES = {
  TransferWithAuthorization: [
    { name: 'from', type: 'address' },
    { name: 'to', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'validAfter', type: 'uint256' },
    { name: 'validBefore', type: 'uint256' },
    { name: 'nonce', type: 'bytes32' },
  ],
} as const;

/** Only our development token has a mint, callable by the account that deployed it. */
export const TEST_USDC_ABI = parseAbi([
  'function mint(address to, uint256 value)',
  'function minter() view returns (address)',
  'function DOMAIN_SEPARATOR() view returns (bytes32)',
]);

export type ContractArtifact = { contractName: string; compiler: string; abi: Abi; bytecode: Hex };

const ARTIFACT_URL = new URL('../../../contracts/build/TestUSDC.json', import.meta.url);

export function loadTestUsdcArtifact(): ContractArtifact {
  const artifact = JSON.parse(readFileSync(ARTIFACT_URL, 'utf8')) as ContractArtifact;
  if (!/^0x[0-9a-f]+$/.test(artifact.bytecode)) {
    throw new Error('contracts/build/TestUSDC.json has no bytecode; run npm run build:contracts.');
  }
  return artifact;
}

/** Where public chains keep their multicall contract; the x402 facilitator reads through it. */
export const MULTICALL_ADDRESS: Address = '0xcA11bde05977b3631167028862bE2a173976CA11';
const MULTICALL_ARTIFACT_URL = new URL('../../../contracts/build/LocalMulticall.json', import.meta.url);

/**
 * Puts contracts/LocalMulticall.sol's runtime code at MULTICALL_ADDRESS on a development node
 * that has none there (anvil starts empty). Uses anvil_setCode, so it works on anvil (and
 * Hardhat) only; answers false when the node refused.
 */
export async function installLocalMulticall(publicClient: Clients['publicClient']): Promise<boolean> {
  if (await hasCode(publicClient, MULTICALL_ADDRESS)) return true;
  const artifact = JSON.parse(readFileSync(MULTICALL_ARTIFACT_URL, 'utf8')) as { deployedBytecode: Hex };
  try {
    await publicClient
      .extend(testActions({ mode: 'anvil' }))
      .setCode({ address: MULTICALL_ADDRESS, bytecode: artifact.deployedBytecode });
  } catch {
    return false;
  }
  return hasCode(publicClient, MULTICALL_ADDRESS);
}

/**
 * The keyless CREATE2 factory that anvil (like most EVM chains) carries at a fixed address. With it
 * the token lands at the same address on every fresh anvil for a given gas wallet, so a payer's
 * configuration survives restarts of the development server.
 */
export const CREATE2_FACTORY: Address = '0x4e59b44847b379578588920cA78FbF26c0B4956C';
const DEPLOY_SALT = keccak256(stringToHex('tollbook:TestUSDC:1'));

type Clients = {
  publicClient: PublicClient<Transport, ViemChain>;
  walletClient: WalletClient<Transport, ViemChain, Account>;
};

async function hasCode(publicClient: Clients['publicClient'], address: Address): Promise<boolean> {
  const code = await publicClient.getCode({ address });
  return code !== undefined && code !== '0x';
}

/**
 * Deploys TestUSDC with the gas wallet as minter, or finds the copy already deployed by the same
 * wallet (a reused node). Without the CREATE2 factory it falls back to a plain deployment.
 */
export async function deployTestUsdc({ publicClient, walletClient }: Clients): Promise<Address> {
  const artifact = loadTestUsdcArtifact();
  const minter = walletClient.account.address;
  const initCode = encodeDeployData({ abi: artifact.abi, bytecode: artifact.bytecode, args: [minter] });
  if (await hasCode(publicClient, CREATE2_FACTORY)) {
    const address = getContractAddress({
      opcode: 'CREATE2',
      from: CREATE2_FACTORY,
      salt: DEPLOY_SALT,
      bytecode: initCode,
    });
    if (await hasCode(publicClient, address)) return address;
    const hash = await walletClient.sendTransaction({
      to: CREATE2_FACTORY,
      data: concatHex([DEPLOY_SALT, initCode]),
    });
    const receipt = await publicClient.waitForTransactionReceipt({ hash });
    if (receipt.status !== 'success' || !(await hasCode(publicClient, address))) {
      throw new Error(`Deploying TestUSDC through the CREATE2 factory failed (transaction ${hash}).`);
    }
    return address;
  }
  const hash = await walletClient.deployContract({
    abi: artifact.abi,
    bytecode: artifact.bytecode,
    args: [minter],
  });
  const receipt = await publicClient.waitForTransactionReceipt({ hash });
  if (receipt.status !== 'success' || !receipt.contractAddress) {
    throw new Error(`Deploying TestUSDC failed (transaction ${hash}).`);
  }
  return receipt.contractAddress;
}

/**
 * Reads name, version and decimals from the token. EIP-5267 `eip712Domain()` is preferred (it
 * is the domain the contract really verifies against); tokens without it (Circle's USDC) answer
 * `name()` and `version()`.
 */
export async function readTokenInfo(publicClient: PublicClient, address: Address): Promise<TokenInfo> {
  const contract = { address, abi: EIP3009_TOKEN_ABI } as const;
  const [decimals, symbol] = await Promise.all([
    publicClient.readContract({ ...contract, functionName: 'decimals' }),
    publicClient.readContract({ ...contract, functionName: 'symbol' }),
  ]);
  let name: string;
  let version: string;
  try {
    const domain = await publicClient.readContract({ ...contract, functionName: 'eip712Domain' });
    [, name, version] = domain;
  } catch {
    [name, version] = await Promise.all([
      publicClient.readContract({ ...contract, functionName: 'name' }),
      publicClient.readContract({ ...contract, functionName: 'version' }),
    ]);
  }
  return { address, name, version, decimals, symbol };
}
