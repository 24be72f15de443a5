export { type GasWalletDeps, lowGasWallets, recordGasBalances } from './service.ts';
